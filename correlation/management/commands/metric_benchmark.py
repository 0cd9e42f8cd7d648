"""``manage.py metric_benchmark STUDY [STUDY ...]``: the metric x study table of a statistic, as a text table,
CSV, JSON or LaTeX (correlation/benchmark/selectors.py computes it; stats/benchmark/ formats it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.selectors.studies import StudyLookupError, study_by_name_or_id
from correlation.benchmark.exports import benchmark_csv
from correlation.benchmark.selectors import BenchmarkInputError, metric_benchmark
from stats.benchmark.formats import benchmark_json, benchmark_latex, benchmark_text
from stats.benchmark.options import GROUPINGS, STATISTICS, BenchmarkOptions
from stats.report.types import OptionError

FORMATS = {"table": benchmark_text, "csv": benchmark_csv, "json": benchmark_json, "latex": benchmark_latex}


class Command(BaseCommand):
    help = (
        "Print (or write) one statistic of each metric on each of the studies named: a metric x study table."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("studies", nargs="+", metavar="STUDY", help="study names or ids")
        parser.add_argument("--metrics", default="", help="metric names or signatures, comma-separated")
        parser.add_argument("--statistic", default="pearson", choices=STATISTICS)
        parser.add_argument("--grouping", default="none", choices=GROUPINGS, help="for the correlations")
        parser.add_argument("--question", help="a question every study has (default: each study's first)")
        parser.add_argument("--owner", help="the owner's username, where two researchers use a study name")
        parser.add_argument("--resamples", default="", help="bootstrap resamples of the intervals (0: none)")
        parser.add_argument("--seed", default="", help="seed of the bootstrap resamples")
        parser.add_argument("--format", choices=list(FORMATS), default="table")
        parser.add_argument("--output", type=Path, help="write to this file instead of stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        studies = []
        for key in options["studies"]:
            try:
                study = study_by_name_or_id(key, owner=options["owner"])
            except StudyLookupError as error:
                raise CommandError(str(error)) from None
            if study not in studies:
                studies.append(study)
        try:
            chosen = BenchmarkOptions.parse(
                {key: options[key] for key in ("statistic", "grouping", "resamples", "seed")}
            )
            metrics = [part.strip() for part in options["metrics"].split(",") if part.strip()]
            table = metric_benchmark(
                studies=studies, options=chosen, metrics=metrics, question=options["question"]
            )
        except (OptionError, BenchmarkInputError) as error:
            raise CommandError(str(error)) from None
        text = FORMATS[options["format"]](table)
        if options["output"] is not None:
            options["output"].write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {options['output']}")
        else:
            self.stdout.write(text, ending="")
