"""The query stage: stored queries and parameter binding (`stored`), the embedded
pyoxigraph store (`store`), result formats (`results`), slug and name lookup
(`lookup`), the HTTP client for endpoints and stores (`net`), and Graph Store Protocol
uploads (`graph_store`)."""
