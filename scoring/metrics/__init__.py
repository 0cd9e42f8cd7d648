"""The metric core: pure-Python automatic dialog metrics, batch-first, with reproducible signatures.

Nothing below this package imports Django, DRF, Celery or a project app (an import-linter contract in
pyproject.toml checks it), so the same code scores a study in a worker, a benchmark or a notebook.

- :mod:`scoring.metrics.tokenize`: the tokenizers whose names go into signatures;
- :mod:`scoring.metrics.bleu`: sentence and corpus BLEU (Papineni et al., 2002) matching nltk;
- :mod:`scoring.metrics.registry`: every metric the app can compute, by name;
- :mod:`scoring.metrics.signature`: ``bleu-2|refs:multi|smooth:method1|tok:en-v1|version:0.1.0`` strings.
"""

# Bumped whenever a change to this package can change a stored score; it is part of every signature.
METRICS_VERSION = "0.1.0"
