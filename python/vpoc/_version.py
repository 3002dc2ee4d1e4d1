"""The package version (read by the build through a regex; keep it one line)."""

__version__ = "0.1.0"
