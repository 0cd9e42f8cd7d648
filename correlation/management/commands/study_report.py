"""``manage.py study_report NAME``: a study's report as JSON (the API's document), CSV rows or LaTeX."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotation.selectors.studies import StudyLookupError, study_by_name_or_id
from correlation.report.cache import report_current
from correlation.report.exports import correlation_rows_as_csv
from correlation.selectors import study_question_by_name
from stats.report.document import document_as_json, document_for_question, report_document_from_json
from stats.report.types import OPTION_KEYS, OptionError, ReportOptions


class Command(BaseCommand):
    help = "Print (or write) a study's correlation report: the JSON document, the CSV rows, or LaTeX tables."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the study's name")
        parser.add_argument("--format", choices=["json", "csv", "latex"], default="json")
        parser.add_argument("--question", help="one question's entries only (default: every question)")
        parser.add_argument("--output", type=Path, help="write to this file instead of stdout")
        parser.add_argument(
            "--bundle",
            type=Path,
            help="also write the reproducibility bundle (a zip: inputs, report, tables, figures, recompute.py)",
        )
        parser.add_argument(
            "--filter", default="study", help='"study" (default), "none", or a kappa threshold'
        )
        parser.add_argument("--normalise", default="none", choices=["none", "z"], help="per-rater z-scores")
        parser.add_argument("--resamples", default="1000", help="bootstrap resamples (0: none)")
        parser.add_argument("--seed", default="", help="seed of the bootstrap resamples")
        parser.add_argument(
            "--grouping",
            default="none",
            help='grouped correlations: "none" (default), "context" (item-grouped) or "system"',
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            study = study_by_name_or_id(options["name"])
        except StudyLookupError as error:
            raise CommandError(str(error)) from None
        name = options["question"]
        if name and study_question_by_name(study=study, name=name) is None:
            raise CommandError(f"study {study.name!r} has no question named {name!r}")
        try:
            report_options = ReportOptions.parse({key: options[key] for key in OPTION_KEYS})
        except OptionError as error:
            raise CommandError(str(error)) from None
        with tqdm(total=100, desc="report", unit="%", disable=None, file=self.stderr._out) as bar:

            def progress(stage: str, done: int, total: int) -> None:
                bar.set_description(stage[:40])
                bar.n = int(100 * done / total) if total else 0
                bar.refresh()

            snapshot = report_current(study=study, options=report_options, progress=progress)
        document = document_for_question(report_document_from_json(snapshot.document), name)
        if options["format"] == "json":
            text = document_as_json(document)
        elif options["format"] == "csv":
            text = correlation_rows_as_csv(document["rows"])
        else:
            from stats.latex import report_latex

            text = report_latex(document, study_name=study.name)
        if options["bundle"] is not None:
            from correlation.bundle.archive import report_bundle
            from correlation.bundle.inputs import BundleStale

            with tqdm(total=2, desc="bundle", disable=None, file=self.stderr._out) as bar:

                def figures(stage: str, done: int, total: int) -> None:
                    bar.set_description(stage[:40])
                    bar.n = done
                    bar.refresh()

                try:
                    content = report_bundle(study=study, snapshot=snapshot, progress=figures)
                except BundleStale as error:
                    raise CommandError(
                        f"no bundle written: {error} (annotators answered while the report was computed; "
                        "run the command again, or when the study is quiet)"
                    ) from None
            options["bundle"].write_bytes(content)
            self.stderr.write(
                f"wrote the reproducibility bundle ({len(content):,} bytes) to {options['bundle']}"
            )
        if options["output"] is None:
            self.stdout.write(text, ending="")
        else:
            options["output"].write_text(text, encoding="utf-8")
            self.stderr.write(
                f"wrote the {options['format']} report of {study.name!r} to {options['output']}"
            )
