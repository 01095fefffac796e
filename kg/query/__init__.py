"""The query stage."""
