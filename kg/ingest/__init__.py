"""The ingest stage: YAML profiles and registries into the typed model (`load`, with safe
YAML in `yamlsafe`, privacy in `redact`, the JSON Schema in `schema`, warnings in `lint`),
new projects (`scaffold`, `catalog`), and importers that merge BibTeX, CSL-JSON, ORCID
and dblp records into profiles (`importer`)."""
