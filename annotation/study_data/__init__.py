"""A study's data, the round trip of issue 14: imports (upload, a large import a worker runs, undo), the contexts
to run systems on, deleting a system; pages and API. The import formats themselves are annotation/importers/."""
