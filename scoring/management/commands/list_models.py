"""Print the trained models of the learned metrics: name, kind, hash, whether default, corpus, path."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from scoring.selectors import trained_models_all


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        models = list(trained_models_all())
        if not models:
            self.stdout.write("no trained model yet (manage.py train_metric)")
        for model in models:
            default = "default" if model.is_default else "-"
            self.stdout.write(
                f"{model.name}\t{model.kind}\t{model.content_hash[:12]}\t{default}\t{model.corpus}\t{model.path}"
            )
