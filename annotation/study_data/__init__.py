"""A study's data and its round trip: imports (upload, a large import a worker runs, undo), the contexts
to run systems on, deleting a system; pages and API. The import formats themselves are annotation/importers/."""
