"""Cancel a pending or running scoring run: its unfinished chunks stop at their next heartbeat, and the
scores its finished chunks stored are kept.

    manage.py cancel_scoring_run 42
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from scoring.models import ScoringRun
from scoring.services import scoring_run_cancel


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("run", type=int, help="the run's id (see the study page or the API)")

    def handle(self, *args: Any, **options: Any) -> None:
        run = ScoringRun.objects.filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"no scoring run {options['run']}")
        if not scoring_run_cancel(run=run):
            raise CommandError(f"run {run.pk} had already ended ({run.get_status_display()})")
        self.stdout.write(self.style.SUCCESS(f"run {run.pk} cancelled"))
