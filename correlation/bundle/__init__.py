"""The reproducibility bundle of a report (one zip: the document, tables, inputs, figures, a script that
recomputes the rows), built by a worker; files/ holds what is copied into it as it is."""
