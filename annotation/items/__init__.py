"""The researcher's item browser: every reply with its ratings, flags and scores, and adjudication."""
