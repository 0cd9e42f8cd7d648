"""The correlation app computes its reports from ratings and scores; it stores nothing of its own yet."""
