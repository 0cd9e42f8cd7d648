"""Import corpus or rating files into a study, creating the study first when it does not exist.

    python manage.py import_study --format multiref --study "DailyDialog multi-ref" multireftest.json

All or nothing: a rejected import prints every problem and changes nothing (not even the new study).
Formats: docs/import-formats.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.db.models import Q

from annotation.importers import DEFAULT_SCALE_FOR_FORMAT, IMPORT_FORMATS, ImportFile, ImportRejected
from annotation.models import Language, Study
from annotation.scales import SCALE_PRESETS
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from kernel.roles import RESEARCHERS_GROUP


class Command(BaseCommand):
    help = "Import files (dailydialog, multiref, multiref-ratings, grade, jsonl, csv, conversations-jsonl) into a study."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", required=True, choices=list(IMPORT_FORMATS))
        parser.add_argument("--study", required=True, help="study name; created when it does not exist")
        parser.add_argument("--scale", choices=list(SCALE_PRESETS), help="scale of a new study's question")
        parser.add_argument("--owner", help="username owning a new study (default: the only researcher)")
        parser.add_argument("--question", help="question that receives ratings of formats naming none")
        parser.add_argument("--language", choices=list(Language.values), default=Language.ENGLISH)
        parser.add_argument("paths", nargs="+", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        files = [_read(path) for path in options["paths"]]
        try:
            with transaction.atomic():  # a rejected import must not leave a new, empty study behind
                study = self._study(options)
                record = study_import(
                    study=study,
                    format=options["format"],
                    files=files,
                    user=study.owner,
                    question=options["question"],
                )
        except ImportRejected as rejected:
            report = rejected.report()  # grouped by file, field and message, as the study page shows them
            for entry in report.entries:
                self.stderr.write(entry)
            raise CommandError(f"import rejected, nothing was changed: {report.summary}") from rejected

        self.stdout.write(self.style.SUCCESS(f"Imported {', '.join(record.filenames)} into {study.name!r}:"))
        for key, value in record.counts.items():
            self.stdout.write(f"  {key.replace('_', ' ')}: {value:,}")
        for warning in record.warnings:
            self.stdout.write(self.style.WARNING(f"warning: {warning}"))

    def _study(self, options: dict[str, Any]) -> Study:
        named = Study.objects.filter(name=options["study"].strip())
        if options["owner"]:
            named = named.filter(owner__username=options["owner"])
        if named.count() > 1:
            raise CommandError(
                f"{named.count()} studies are named {options['study']!r}: give --owner USERNAME to say whose"
            )
        study = named.first()
        if study is not None:
            if options["scale"]:
                self.stdout.write(f"Study {study.name!r} exists; --scale is ignored.")
            return study
        scale = options["scale"] or DEFAULT_SCALE_FOR_FORMAT[options["format"]]
        owner = _owner(options["owner"])
        self.stdout.write(f"Creating study {options['study']!r} (scale {scale}, owner {owner.username}).")
        return study_create(owner=owner, name=options["study"], language=options["language"], scale=scale)


def _owner(username: str | None) -> User:
    if username:
        try:
            return User.objects.get(username=username)
        except User.DoesNotExist:
            raise CommandError(f"no user named {username!r}") from None
    for candidates in (
        User.objects.filter(is_superuser=True),
        User.objects.filter(Q(groups__name=RESEARCHERS_GROUP)).distinct(),
    ):
        found = list(candidates[:2])
        if len(found) == 1:
            return found[0]
    raise CommandError("cannot tell who owns the new study: give --owner USERNAME")


def _read(path: Path) -> ImportFile:
    try:
        return ImportFile(name=path.name, data=path.read_bytes())
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
