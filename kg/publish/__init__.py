"""The publish stage: writers (Turtle, JSON-LD, N-Triples) and per-person subsets
(`export`), the IRI layout of the web root (`layout`), HTML pages (`site`, `markup`,
`templates/`), citations (`citation`), deployment configuration (`deploy`), rendering in
parts (`render`) and the atomic swap of the output directory (`outdir`)."""
