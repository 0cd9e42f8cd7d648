"""A researcher's own word vectors, by feature: the list selectors, the page (list, upload form, progress),
the REST API and the upload form. The work is in scoring.services.word_vectors; the conversion in the pure
scoring.metrics.vector_files."""
