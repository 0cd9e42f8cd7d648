"""Fixtures that start real services for integration and browser tests (filled in by the scoring work)."""
