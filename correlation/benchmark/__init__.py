"""A benchmark across studies: one metric x study table of the researcher's own studies, as a page,
an API endpoint and ``manage.py metric_benchmark``; the statistics are in stats/benchmark/."""
