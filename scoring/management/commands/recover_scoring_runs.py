"""Queue again the scoring runs whose task message may have been lost (see scoring_runs_recover)."""

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
            default=60.0,
            help="seconds a run may wait in PENDING before it counts",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        recovered = scoring_runs_recover(pending_grace_seconds=options["pending_grace"])
        if recovered:
            self.stdout.write(f"queued again: {', '.join(f'run {pk}' for pk in recovered)}")
        else:
            self.stdout.write("no orphaned scoring runs")
