"""The graph stage: namespaces (`namespaces`), the mapping from the resolved model to
schema.org + FOAF + kg triples with minted IRIs and a source map (`mapping`), the triple
index the writers and validation share (`triples`), and N-Triples text (`ntriples`)."""
