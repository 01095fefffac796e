"""`kg serve`: the built site and data with content negotiation, a SPARQL 1.1 endpoint whose
queries run in capped worker processes, the stored queries as an API, and `--watch`
(docs/serve.md). The entry points live in kg.serve.server; this package imports nothing,
so a worker process that imports kg.serve.sparql does not load the web stack.
"""
