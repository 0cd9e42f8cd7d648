"""Pure statistics of dialog evaluation: correlations and their tests, agreement coefficients, the bootstrap,
the human ceiling, the report document built from plain inputs, its figures' data and its LaTeX.

Nothing here imports Django, DRF, Celery or an app (an import-linter contract names this package once), so
any app may use it, and a benchmark or a notebook can compute a report without a database.
"""
