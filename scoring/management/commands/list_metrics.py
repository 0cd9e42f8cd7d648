"""Print every metric a scoring run can compute, one name per line (with --verbose: what it needs).

Per-response metrics first, then system-level ones (one value per system: diversity, corpus BLEU)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from scoring.metrics.registry import (
    available_metric_names,
    available_system_metric_names,
    metric_spec,
    system_metric_spec,
)


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
            model = f"needs a trained {spec.model_kind} model" if spec.model_kind else "no training"
            self.stdout.write(f"{name}\t{references}\t{model}\t{spec.description}")
        for name in available_system_metric_names():
            if not options["verbose"]:
                self.stdout.write(name)
                continue
            system_spec = system_metric_spec(name)
            references = "needs references" if system_spec.needs_references else "reference-free"
            self.stdout.write(f"{name}\t{references}\tsystem level\t{system_spec.description}")
