"""The publish stage."""
