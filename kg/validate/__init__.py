"""The validate stage."""
