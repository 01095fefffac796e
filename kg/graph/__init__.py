"""The graph stage."""
