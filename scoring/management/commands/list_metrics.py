"""Print every metric a scoring run can compute, one name per line (with --verbose: what it needs).

Per-response metrics first, then system-level ones (one value per system: diversity, corpus BLEU). A
metric registered by a plugin (entry point group ``dialeval.metrics``) carries a second, tab-separated
column ``plugin <distribution> <version>`` (with --verbose: a fifth column). A plugin that could not be
loaded is listed on stderr as broken, with the reason; its metrics are not available. With --verbose, a metric
that several tools compute ends with ``implementations: nltk, nlg-eval, sacrebleu`` (its default first; a run
chooses with --implementation, see score_study)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand

from scoring.metrics.registry import (
    available_metric_names,
    available_system_metric_names,
    metric_plugin,
    metric_plugins,
    metric_spec,
    system_metric_spec,
)
from scoring.metrics.spec import DEFAULT_IMPLEMENTATION


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--verbose", action="store_true", help="also print whether it needs references, and a description"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for name in available_metric_names():
            plugin = metric_plugin(name)
            origin = [f"plugin {plugin.distribution} {plugin.version}"] if plugin else []
            if not options["verbose"]:
                self.stdout.write("\t".join([name, *origin]))
                continue
            spec = metric_spec(name)
            references = "needs references" if spec.needs_references else "reference-free"
            model = f"needs a trained {spec.model_kind} model" if spec.model_kind else "no training"
            tools = (
                [f"implementations: {', '.join(_ordered(spec.implementations))}"]
                if spec.implementations
                else []
            )
            self.stdout.write("\t".join([name, references, model, spec.description, *origin, *tools]))
        for name in available_system_metric_names():
            if not options["verbose"]:
                self.stdout.write(name)
                continue
            system_spec = system_metric_spec(name)
            references = "needs references" if system_spec.needs_references else "reference-free"
            offered = (
                f"\timplementations: {', '.join(_ordered(system_spec.implementations))}"
                if system_spec.implementations
                else ""
            )
            self.stdout.write(f"{name}\t{references}\tsystem level\t{system_spec.description}{offered}")
        for plugin in metric_plugins():
            if not plugin.loaded:
                self.stderr.write(f"broken plugin {plugin.describe()}: {plugin.error}")


def _ordered(implementations: Iterable[str]) -> list[str]:
    return sorted(implementations, key=lambda name: name != DEFAULT_IMPLEMENTATION)
