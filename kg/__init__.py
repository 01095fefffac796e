"""kg: researcher profiles as linked data (schema.org + FOAF), validated and published."""

__version__ = "0.1.0"
