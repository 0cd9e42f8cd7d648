"""Scoring runs from the study page and the API: the run form, start and cancel, the model each kind of learned
metric uses in the study; the runs API, the metrics a run can compute and the scores runs stored."""
