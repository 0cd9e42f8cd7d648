"""Print the trained models of the learned metrics, one per line, tab-separated under a header: name, kind,
hash, whether default, corpus, training pairs, epochs, cells, best validation accuracy, size and path (the
same figures as the trained models page and ``GET /api/trained-models/``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from scoring.selectors import trained_model_rows

COLUMNS = (
    "name",
    "kind",
    "hash",
    "default",
    "corpus",
    "pairs",
    "epochs",
    "cells",
    "val_acc",
    "size_mb",
    "path",
)


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        rows = trained_model_rows()
        if not rows:
            self.stdout.write("no trained model yet (manage.py train_metric)")
            return
        self.stdout.write("\t".join(COLUMNS))
        for row in rows:
            model, figures = row.model, row.figures
            accuracy = "-" if figures.validation_accuracy is None else f"{figures.validation_accuracy:.4f}"
            size = "-" if figures.size_bytes is None else f"{figures.size_bytes / 1_000_000:.1f}"
            values = [
                model.name,
                model.kind,
                model.content_hash[:12],
                "default" if model.is_default else "-",
                model.corpus or "-",
                "-" if figures.pairs is None else str(figures.pairs),
                "-" if figures.epochs is None else str(figures.epochs),
                ",".join(figures.cells) or "-",
                accuracy,
                size,
                model.path,
            ]
            self.stdout.write("\t".join(value.replace("\t", " ") for value in values))
