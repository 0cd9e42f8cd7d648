"""``manage.py study_report NAME``: a study's utterance-level correlation table as JSON or CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Study
from correlation.exports import correlation_rows_as_csv, correlation_rows_as_json
from correlation.selectors import study_question_by_name
from correlation.services import correlation_report, correlation_rows_as_dicts


class Command(BaseCommand):
    help = "Print (or write) the metric-vs-human correlation table of a study."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the study's name")
        parser.add_argument("--format", choices=["json", "csv"], default="json")
        parser.add_argument("--question", help="one question's rows only (default: every question)")
        parser.add_argument("--output", type=Path, help="write to this file instead of stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(name=options["name"]).first()
        if study is None:
            raise CommandError(f"no study named {options['name']!r}")
        question = None
        if options["question"]:
            question = study_question_by_name(study=study, name=options["question"])
            if question is None:
                raise CommandError(f"study {study.name!r} has no question named {options['question']!r}")
        rows = correlation_rows_as_dicts(correlation_report(study=study, question=question))
        text = correlation_rows_as_csv(rows) if options["format"] == "csv" else correlation_rows_as_json(rows)
        if options["output"] is None:
            self.stdout.write(text, ending="")
        else:
            options["output"].write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {len(rows)} rows to {options['output']}")
