"""Import metric scores computed elsewhere (USR, GRADE, an LLM judge...) into a study, all or nothing.

    manage.py import_metric_scores "My study" usr_scores.csv
    manage.py import_metric_scores 12 judge.jsonl --format jsonl

One score per row: the reply (reply_id: its id in the imported files; or response_id: the app's own id;
or context_id and system), metric, value, and optionally signature (docs/import-formats.md, "Metric
scores computed elsewhere"). Nothing is written when any row is bad: every problem is printed with its
file, line and field. Importing a metric again (same name and signature) replaces its values for the
replies in the file. The report shows each imported metric as "<name> (external)".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from annotation.selectors.studies import StudyLookupError, study_by_name_or_id
from kernel.importing.problems import ImportFile, ImportRejected
from scoring.external.file_format import FORMATS
from scoring.services.external_scores import external_scores_import


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("study", help="the study's name (or its id)")
        parser.add_argument("file", help="a CSV or JSON Lines file of scores")
        parser.add_argument(
            "--format",
            choices=[*FORMATS, "auto"],
            default="auto",
            help="auto (default): by the file's suffix (.csv, .jsonl), else by its first character",
        )
        parser.add_argument("--owner", default=None, help="the study owner's username, when names repeat")

    def handle(self, *args: Any, **options: Any) -> None:
        study = self._study(options["study"], options["owner"])
        path = Path(options["file"])
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror or error}") from None
        try:
            result = external_scores_import(
                study=study, file=ImportFile(name=path.name, data=data), format=options["format"]
            )
        except ImportRejected as rejected:
            raise CommandError(str(rejected)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"imported {result.scores} score(s) of {len(result.metrics)} metric(s) from {result.file} "
                f"into {study.name!r}:"
            )
        )
        for line in result.summary().splitlines():
            self.stdout.write(f"  {line}")
        for warning in result.warnings:
            self.stdout.write(self.style.WARNING(f"warning: {warning}"))

    def _study(self, key: str, owner: str | None) -> Study:
        try:
            return study_by_name_or_id(key, owner=owner)
        except StudyLookupError as error:
            raise CommandError(str(error)) from None
