"""Training learned metrics' models: the training form, the job page, the list of trained models with
their figures; the training jobs and trained models API."""
