"""Data sets for the course, all generated from a seed or shipped in a package."""
