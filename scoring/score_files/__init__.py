"""POST /api/score/: a small batch of replies scored in the request, without a study (score_files as a request)."""
