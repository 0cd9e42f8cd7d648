"""A study's correlation report: the page and its downloads, the API, the cache of computed reports (computed
in the request while small, else by a worker), what it loads from the database, and its tables as CSV."""
