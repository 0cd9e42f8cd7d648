"""A researcher's studies: the home page, the study list, a new study, the study page, and the studies API."""
