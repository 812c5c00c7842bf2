"""The package's version (one place: the package metadata reads it too)."""

__version__ = "0.1.0"
