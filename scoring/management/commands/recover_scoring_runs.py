"""Make the queue agree with the scoring runs, once (what Celery beat does every 30 s; see
scoring.services.recovery): send pending runs, resume runs whose workers died, fail chunks past the attempt
cap, finish runs whose chunks are all done."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from scoring.services import scoring_runs_recover


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--pending-grace",
            type=float,
            default=5.0,
            help="seconds a run may wait in PENDING before it counts as not sent",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        reports = scoring_runs_recover(pending_grace_seconds=options["pending_grace"])
        if not any(reports):
            self.stdout.write("nothing to recover")
            return
        for report in reports:
            if report:
                self.stdout.write(str(report))
