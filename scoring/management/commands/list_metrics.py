"""Print every metric a scoring run can compute, one name per line (with --verbose: what it needs)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from scoring.metrics.registry import available_metric_names, metric_spec


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--verbose", action="store_true", help="also print whether it needs references, and a description"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for name in available_metric_names():
            if not options["verbose"]:
                self.stdout.write(name)
                continue
            spec = metric_spec(name)
            references = "needs references" if spec.needs_references else "reference-free"
            self.stdout.write(f"{name}\t{references}\t{spec.description}")
