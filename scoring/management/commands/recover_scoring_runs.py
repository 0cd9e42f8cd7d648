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
        report = scoring_runs_recover(pending_grace_seconds=options["pending_grace"])
        if not report:
            self.stdout.write("nothing to recover")
            return
        for label, ids in (
            ("sent", report.sent_runs),
            ("resumed", report.resumed_runs),
            ("finished", report.finished_runs),
        ):
            if ids:
                self.stdout.write(f"{label}: {', '.join(f'run {pk}' for pk in ids)}")
        if report.failed_chunks:
            self.stdout.write(
                f"failed after the attempt cap: {', '.join(f'chunk {pk}' for pk in report.failed_chunks)}"
            )
        if report.rerouted_chunks:
            self.stdout.write(
                f"moved {report.rerouted_chunks} chunk(s) from the gpu queue to cpu (no GPU worker)"
            )
