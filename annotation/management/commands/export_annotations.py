"""Export a study's annotations: ratings, collected references, diversity or pairwise judgments, as CSV
or JSONL.

    python manage.py export_annotations "DailyDialog multi-ref" --what ratings --format csv --output r.csv

STUDY is the study's id or name. Without --output the file goes to standard output. The bytes are those
of the study page's download links and of the REST API (columns: docs/annotation-api.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exports.files import EXPORT_FORMATS, encoded
from annotation.models import Study
from annotation.selectors.exports import EXPORT_KINDS, export_chunks
from annotation.selectors.studies import StudyLookupError, study_by_name_or_id


class Command(BaseCommand):
    help = "Export a study's ratings, references, diversity or pairwise judgments as CSV or JSON Lines."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="the study's id or name")
        parser.add_argument("--what", choices=EXPORT_KINDS, default="ratings")
        parser.add_argument("--format", choices=EXPORT_FORMATS, default="csv")
        parser.add_argument("--output", type=Path, help="file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        study = _study(options["study"])
        chunks = encoded(export_chunks(study=study, what=options["what"], fmt=options["format"]))
        output: Path | None = options["output"]
        if output is None:
            for chunk in chunks:
                self.stdout.write(chunk.decode("utf-8"), ending="")
            return
        try:
            with output.open("wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error.strerror}") from None
        self.stderr.write(f"Wrote the {options['what']} of {study.name!r} to {output}.")


def _study(key: str) -> Study:
    try:
        return study_by_name_or_id(key)
    except StudyLookupError as error:
        raise CommandError(str(error)) from None
