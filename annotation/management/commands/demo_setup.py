"""Create the demo researcher, two demo annotators and a demo study (idempotent: safe to run again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from django.db import transaction
from rest_framework.authtoken.models import Token

from annotation.demo_sample import demo_sample_jsonl
from annotation.importers import ImportFile
from annotation.models import Annotator, Study
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from kernel.roles import RESEARCHERS_GROUP

DEMO_RESEARCHER = ("researcher", "researcher-demo")
DEMO_ANNOTATORS = [("annotator1", "annotator1-demo"), ("annotator2", "annotator2-demo")]
MULTIREF_STUDY = "Demo: DailyDialog multi-reference (Gupta et al. 2019)"
SAMPLE_STUDY = "Demo: sample dialogs"


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--sample", action="store_true", help="use the built-in sample even when ../shared/data exists"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        researcher = self._user(*DEMO_RESEARCHER, researcher=True)
        annotators = [self._user(name, password, researcher=False) for name, password in DEMO_ANNOTATORS]
        token, _ = Token.objects.get_or_create(user=researcher)

        multiref_dir = Path(settings.SHARED_DATA_DIR) / "multirefeval"
        if multiref_dir.is_dir() and not options["sample"]:
            study = self._multiref_study(researcher, multiref_dir)
        else:
            study = self._sample_study(researcher)
        for index, user in enumerate(annotators, start=1):
            Annotator.objects.get_or_create(
                study=study, user=user, defaults={"pseudonym": f"volunteer-{index}"}
            )

        self.stdout.write(self.style.SUCCESS(f"Demo study: {study.name} (id {study.pk})"))
        self.stdout.write(f"  researcher login: {DEMO_RESEARCHER[0]} / {DEMO_RESEARCHER[1]}")
        for name, password in DEMO_ANNOTATORS:
            self.stdout.write(f"  annotator login:  {name} / {password}")
        self.stdout.write(f"  researcher API token: {token.key}")
        self.stdout.write(f"  invite link for more annotators: /work/join/{study.invite_token}/")

    def _user(self, username: str, password: str, *, researcher: bool) -> User:
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(password)
            user.save()
        if researcher:
            group, _ = Group.objects.get_or_create(name=RESEARCHERS_GROUP)
            user.groups.add(group)
        return user

    def _multiref_study(self, owner: User, folder: Path) -> Study:
        return self._study_with_imports(
            owner=owner,
            name=MULTIREF_STUDY,
            scale="1-5",
            ratings_per_item=5,
            description=(
                "500 replies (5 systems × 100 DailyDialog test contexts) with mean MTurk appropriateness "
                "ratings, and the references of every context (the original + 4 collected). Data: "
                "../shared/data/multirefeval (non-commercial licence; not part of this repository)."
            ),
            imports=[
                ("multiref", _read(folder / "multireftest.json"), "6,740 contexts with their references"),
                (
                    "multiref-ratings",
                    _read(folder / "mturk_rating_processed_output.csv"),
                    "500 rated responses",
                ),
            ],
        )

    def _sample_study(self, owner: User) -> Study:
        return self._study_with_imports(
            owner=owner,
            name=SAMPLE_STUDY,
            scale="0-2",
            ratings_per_item=3,
            description="A small project-written sample: 12 contexts, 3 systems, 3 raters per reply (0-2).",
            imports=[("jsonl", ImportFile(name="demo-sample.jsonl", data=demo_sample_jsonl()), "the sample")],
        )

    @transaction.atomic
    def _study_with_imports(
        self,
        *,
        owner: User,
        name: str,
        scale: str,
        ratings_per_item: int,
        description: str,
        imports: list[tuple[str, ImportFile, str]],
    ) -> Study:
        """The study ``name`` as it is when it exists already (idempotent); else created and imported."""
        existing = Study.objects.filter(owner=owner, name=name).first()
        if existing:
            return existing
        study = study_create(
            owner=owner, name=name, scale=scale, ratings_per_item=ratings_per_item, description=description
        )
        if (
            name == SAMPLE_STUDY
        ):  # the sample also shows the reference-writing task (Gupta et al., 2019, 4R1W)
            study.references_wanted = 4
            study.save(update_fields=["references_wanted"])
        for format_name, file, what in imports:
            self.stdout.write(f"Importing {file.name}: {what} ...")
            study_import(study=study, format=format_name, files=[file], user=owner)
        return study


def _read(path: Path) -> ImportFile:
    return ImportFile(name=path.name, data=path.read_bytes())
