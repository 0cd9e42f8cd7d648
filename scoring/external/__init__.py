"""Metric scores computed elsewhere: the file format, the study page's import and deletion, and the API."""
