"""Nothing to administer: correlation reports are computed on request and stored nowhere (see services.py)."""
