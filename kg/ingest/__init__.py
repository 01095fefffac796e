"""The ingest stage."""
