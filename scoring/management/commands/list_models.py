"""Print the trained models of the learned metrics, one per line, tab-separated under a header: name, kind,
hash, whether default, corpus, what it trained on ("12000 pairs"; MaUde: "800 dialogs"), the epochs run
and the epoch kept by the cell the kind's metric scores with (BERT-RUBER's bert-ruber-unreferenced cell,
MaUde's maude variant), the cells, that cell's validation accuracy ("near chance" flagged in the note),
size and path (the same figures as the trained models page and ``GET /api/trained-models/``)."""

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
    "trained_on",
    "epochs",
    "kept_epoch",
    "cells",
    "scoring_cell",
    "val_acc",
    "size_mb",
    "note",
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
                figures.trained_on.replace(",", ""),
                "-" if figures.epochs is None else str(figures.epochs),
                "-" if figures.kept_epoch is None else str(figures.kept_epoch),
                ",".join(figures.cells) or "-",
                figures.scoring_cell or "-",
                accuracy,
                size,
                "near chance" if figures.near_chance else "-",
                model.path,
            ]
            self.stdout.write("\t".join(value.replace("\t", " ") for value in values))
