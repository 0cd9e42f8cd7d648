"""Train the default RUBER, BERT-RUBER, MaUde and Cross-RUBER models from the DailyDialog corpus in
../shared/data, if present.

    manage.py train_default_models                  # every kind, skipping a kind that has a default already
    manage.py train_default_models --kinds ruber --force
    manage.py train_default_models --threads 1      # torch on 1 CPU thread (a machine busy with other work)
    manage.py train_default_models --kinds ruber,bert-ruber,maude   # without Cross-RUBER (about 40 minutes)

The learned metrics of a study that chooses no model use these ("the default model, trained from
../shared/data/dailydialog when present"). `make run` starts this in the background when the corpus is there
and a default is missing (log: var/log/train-default-models.log); until it finishes, learned metrics are left
out of "all" and asking for one says how to train a model. BERT-RUBER's default model has the pooling
cells (word2vec|bert x max|mean x ranking|ce, the paper's best among them); the Bi-GRU cells take much longer
on a CPU: train them with `train_metric bert-ruber --cells ...` (or `--all-cells`).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from scoring.models import TrainedModel
from scoring.torch_threads import threads_argument
from scoring.trainers import default_kinds, kind_trainer, trainer_kinds


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--kinds",
            default=",".join(default_kinds()),
            help=f"comma-separated among {','.join(trainer_kinds())} (default {','.join(default_kinds())})",
        )
        parser.add_argument("--force", action="store_true", help="train even if a default model exists")
        parser.add_argument("--max-pairs", type=int, help="train on the first N pairs only")
        parser.add_argument(
            "--threads",
            type=threads_argument,
            help="torch CPU threads (default: DIALEVAL_TORCH_THREADS, else the cores this process may use)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        corpus = settings.SHARED_DATA_DIR / "dailydialog"
        if not (corpus / "train").is_dir():
            raise CommandError(
                f"no DailyDialog corpus at {corpus} (train/ is missing); train a model on your own "
                "corpus with `manage.py train_metric`"
            )
        kinds = [kind.strip() for kind in options["kinds"].split(",") if kind.strip()]
        unknown = [kind for kind in kinds if kind not in trainer_kinds()]
        if unknown:
            raise CommandError(
                f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(trainer_kinds())}"
            )
        for kind in kinds:
            if not options["force"] and TrainedModel.objects.filter(kind=kind, is_default=True).exists():
                self.stdout.write(f"{kind}: a default model exists already; skipped (--force trains another)")
                continue
            name = f"dailydialog-{kind}-{TrainedModel.objects.filter(kind=kind).count() + 1}"
            arguments = [
                kind,
                "--corpus",
                str(corpus),
                "--format",
                "dailydialog",
                "--name",
                name,
                "--default",
            ]
            if options["max_pairs"]:
                arguments += ["--max-pairs", str(options["max_pairs"])]
            if options["threads"]:
                arguments += ["--threads", str(options["threads"])]
            arguments += kind_trainer(kind).default_model_arguments
            call_command("train_metric", *arguments, stdout=self.stdout, stderr=self.stderr)
