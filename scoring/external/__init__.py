"""Metric scores computed elsewhere (issue 14): the file format, the study page's import and deletion, and the API."""
