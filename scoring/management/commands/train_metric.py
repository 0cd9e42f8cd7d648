"""Train a learned metric's model on a corpus of query-reply pairs (or, for MaUde and Cross-RUBER, of whole
dialogs) and register it for scoring.

    manage.py train_metric ruber --corpus ../shared/data/dailydialog --format dailydialog --name dd-ruber
    manage.py train_metric bert-ruber --corpus ../shared/data/dailydialog --format dailydialog --name dd-bert
    manage.py train_metric bert-ruber --corpus pairs.jsonl --format pairs-jsonl --name my-bert --all-cells
    manage.py train_metric maude --corpus ../shared/data/dailydialog --format dailydialog --name dd-maude
    manage.py train_metric cross-ruber --corpus ../shared/data/dailydialog --format dailydialog --name dd-cross

RUBER trains word2vec and the unreferenced scorer s_U (Tao et al., 2018, sections 3.1-3.2); BERT-RUBER trains the
unreferenced factorial cells over MiniLM and word2vec (Ghazarian et al., 2019, section 2.1): by default the eight pooling
cells, which train in minutes ({bert,word2vec}-{max,mean}-{ranking,ce}); the four Bi-GRU cells take hours
on a CPU and are trained when named (``--cells``) or with ``--all-cells``; MaUde trains its scorer and
the baselines named by --variants on (context, reply) examples of every dialog (Sinha et al., 2020; --format
dialogs-jsonl reads {"turns": [...]} lines, --context-turns cuts the history); Cross-RUBER fine-tunes
MiniLM's top layers (--frozen-layers; 0 on CUDA fine-tunes all) as a cross-encoder of context and reply
(docs/metrics.md, "Cross-RUBER"), caching the frozen layers' token states in
DIALEVAL_MODEL_DIR/cross-ruber/.cache. Early stopping uses the
corpus's validation split when there is one (``--validation``; given DailyDialog's folder, training
uses its ``train/`` split and early stopping its ``validation/`` split), else 5% of the pairs held out with a fixed seed. --default makes the
model the one studies use when they choose none. A progress bar shows the loss; CUDA is used when present.
--threads sets torch's CPU threads (default: settings.DIALEVAL_TORCH_THREADS, else every core this process
may use; give 1 on a machine busy with other work).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from scoring.metrics.bert_ruber.cells import FAST_CELLS
from scoring.metrics.cross_ruber.config import INTERACTIONS
from scoring.metrics.cross_ruber.config import NEGATIVE_KINDS as CROSS_RUBER_NEGATIVES
from scoring.metrics.learned_specs import FACTORIAL_CELLS
from scoring.metrics.maude.dialogs import DIALOG_FORMATS, DIALOGS_JSONL
from scoring.metrics.maude.inputs import POOLINGS
from scoring.metrics.maude.negatives import NEGATIVE_KINDS
from scoring.metrics.maude.variants import ALL_VARIANTS, DEFAULT_VARIANTS
from scoring.metrics.ruber.corpus import CorpusError
from scoring.selectors import trained_model_figures
from scoring.torch_threads import (
    threads_argument,
    torch_threads_apply,
    torch_threads_default,
    torch_threads_source,
)
from scoring.trained_model_services import (
    TrainedModelError,
    TrainingRequest,
    trained_model_train,
    training_corpus_load,
)
from scoring.trainers import NameList, dialog_kinds, kind_trainer, kind_trainers, kinds_taking, trainer_kinds
from scoring.training.model_figures import training_summary

# the flags of the options only some kinds take (the kinds whose trainers read them: scoring.trainers), with
# the request field each sets, in the order they are checked; --cells and --all-cells are checked apart
KIND_FLAGS = (
    ("--variants", "variants"),
    ("--pooling", "pooling"),
    ("--context-turns", "context_turns"),
    ("--negatives", "negatives"),
    ("--frozen-layers", "frozen_layers"),
    ("--interaction", "interaction"),
)


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("kind", choices=trainer_kinds())
        parser.add_argument("--corpus", required=True, type=Path, help="a corpus file or folder")
        parser.add_argument("--format", required=True, choices=DIALOG_FORMATS, dest="corpus_format")
        parser.add_argument("--name", required=True, help="the model's name (letters, digits, - and _)")
        parser.add_argument("--validation", type=Path, help="validation file or folder (same format)")
        parser.add_argument("--epochs", type=int, help="maximum epochs (early stopping may stop sooner)")
        parser.add_argument("--max-pairs", type=int, help="train on the first N pairs (MaUde: dialogs) only")
        parser.add_argument("--device", choices=["cpu", "cuda"], help="default: CUDA when available")
        parser.add_argument("--language", default="en", choices=["en", "zh"])
        parser.add_argument(
            "--cells",
            help=f"BERT-RUBER cells to train, comma-separated (default the pooling cells: {','.join(FAST_CELLS)}; "
            f"known: {','.join(FACTORIAL_CELLS)})",
        )
        parser.add_argument(
            "--all-cells",
            action="store_true",
            help="BERT-RUBER: train every cell, the Bi-GRU (*-rnn-*) cells too (hours on a CPU)",
        )
        parser.add_argument(
            "--variants",
            help=f"MaUde scorers to train, comma-separated (default {','.join(DEFAULT_VARIANTS)}; "
            f"known: {','.join(ALL_VARIANTS)})",
        )
        parser.add_argument(
            "--context-turns",
            type=int,
            help="MaUde, Cross-RUBER: context turns per example (default: MaUde the whole history, Cross-RUBER 3)",
        )
        parser.add_argument(
            "--pooling", choices=POOLINGS, help="MaUde: pooling of the encoder's token vectors"
        )
        parser.add_argument(
            "--negatives",
            help=f"MaUde: negative kinds, comma-separated (default all: {','.join(NEGATIVE_KINDS)}); Cross-RUBER: "
            f"among {','.join(CROSS_RUBER_NEGATIVES)} (default batch,utterance,syntactic,dialog)",
        )
        parser.add_argument(
            "--frozen-layers",
            type=int,
            help="Cross-RUBER: MiniLM's lower layers frozen and their token states cached (default 5; 0 "
            "fine-tunes the whole encoder, for CUDA)",
        )
        parser.add_argument(
            "--interaction", choices=INTERACTIONS, help="Cross-RUBER: how the reply meets the context"
        )
        parser.add_argument("--default", action="store_true", help="make it the default model of its kind")
        parser.add_argument(
            "--threads",
            type=threads_argument,
            help="torch CPU threads (default: DIALEVAL_TORCH_THREADS, else the cores this process may use)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["device"] == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise CommandError("--device cuda: no CUDA device is available on this machine")
        try:
            variants, negatives = self._variants(options), self._negatives(options)
            pairs, validation, description = self._corpus(options)
            cells = self._cells(options)
            threads = torch_threads_apply(options["threads"] or torch_threads_default())
            source = "--threads" if options["threads"] else torch_threads_source()
            self.stdout.write(f"torch threads: {threads} ({source})")
            unit = "dialogs" if options["kind"] in dialog_kinds() else "pairs"
            self.stdout.write(
                f"training {options['kind']} on {len(pairs)} {unit} ({len(validation)} for validation): {description}"
            )
            model = trained_model_train(
                request=TrainingRequest(
                    kind=options["kind"],
                    name=options["name"],
                    corpus_description=description,
                    epochs=options["epochs"],
                    device=options["device"],
                    language=options["language"],
                    cells=cells,
                    threads=threads,
                    variants=variants,
                    context_turns=options["context_turns"],
                    pooling=options["pooling"],
                    negatives=negatives,
                    frozen_layers=options["frozen_layers"],
                    interaction=options["interaction"],
                ),
                pairs=pairs,
                validation_pairs=validation,
                make_default=options["default"],
            )
        except (CorpusError, TrainedModelError) as error:
            raise CommandError(str(error)) from None
        default = " (the default)" if model.is_default else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"registered {model.kind} model {model.name}{default}: {model.path}, hash {model.content_hash}"
            )
        )
        figures = trained_model_figures(model=model)
        summary = training_summary(figures)
        if summary:  # early stopping and the epoch kept, and a validation accuracy near chance, said aloud
            self.stdout.write(self.style.WARNING(summary) if figures.near_chance else summary)

    def _cells(self, options: dict[str, Any]) -> list[str]:
        """The cells to train, for the kinds whose training takes cells: --cells, or every cell with
        --all-cells, else the kind's default cells (said aloud)."""
        lists = _name_lists("cells")
        cells = _names(options["cells"])
        _refuse_unknown(cells, [cell for names in lists.values() for cell in names.choices], "cell")
        if (cells or options["all_cells"]) and options["kind"] not in lists:
            raise CommandError(f"--cells and --all-cells apply to {' and '.join(lists)} only")
        if cells and options["all_cells"]:
            raise CommandError("give --cells or --all-cells, not both")
        own = lists.get(options["kind"])
        if own is not None and not cells:
            cells = list(own.choices if options["all_cells"] else own.initial)
            self.stdout.write(f"cells: {','.join(cells)}")
        return cells

    @staticmethod
    def _negatives(options: dict[str, Any]) -> list[str]:
        negatives = _names(options["negatives"])
        _refuse_unknown(negatives, kind_trainer(options["kind"]).negatives, "negative")
        return negatives

    @staticmethod
    def _variants(options: dict[str, Any]) -> list[str]:
        """The --variants asked, once the flags of options the kind's training does not read, and a corpus
        of dialogs for a kind that trains on pairs, are refused."""
        variants = _names(options["variants"])
        given_by_kinds: dict[tuple[str, ...], list[str]] = {}
        for flag, key in KIND_FLAGS:
            if options[key] is not None:
                given_by_kinds.setdefault(kinds_taking(key), []).append(flag)
        for kinds, given in given_by_kinds.items():
            if options["kind"] not in kinds:
                raise CommandError(
                    f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to {' and '.join(kinds)} only"
                )
        if options["kind"] not in dialog_kinds() and options["corpus_format"] == DIALOGS_JSONL:
            owners = " and ".join(
                f"{trainer.display_name}'s" for trainer in kind_trainers() if trainer.trains_on_dialogs
            )
            raise CommandError(f"--format {DIALOGS_JSONL} is {owners}; {options['kind']} trains on pairs")
        own = _name_lists("variants").get(options["kind"])
        _refuse_unknown(variants, own.choices if own else (), "variant")
        if options["context_turns"] is not None and options["context_turns"] < 1:
            raise CommandError("--context-turns must be at least 1")
        return variants

    def _corpus(self, options: dict[str, Any]) -> tuple[list[Any], list[Any], str]:
        if not options["name"].replace("-", "").replace("_", "").isalnum():
            raise CommandError(f"--name {options['name']!r}: use letters, digits, '-' and '_' only")
        if options["max_pairs"] is not None and options["max_pairs"] < 2:
            raise CommandError("--max-pairs must be at least 2")
        corpus = training_corpus_load(
            kind=options["kind"],
            path=options["corpus"],
            corpus_format=options["corpus_format"],
            validation=options["validation"],
            max_pairs=options["max_pairs"],
        )
        return corpus.training, corpus.validation, corpus.description


def _names(value: str | None) -> list[str]:
    """The names of a comma-separated option."""
    return [name.strip() for name in (value or "").split(",") if name.strip()]


def _refuse_unknown(names: list[str], known: Sequence[str], noun: str) -> None:
    unknown = [name for name in names if name not in known]
    if unknown:
        raise CommandError(f"unknown {noun}(s) {', '.join(unknown)}; known: {', '.join(known)}")


def _name_lists(key: str) -> dict[str, NameList]:
    """The name list ``key`` (cells, variants) of every kind whose training takes one, by kind."""
    return {
        trainer.kind: names for trainer in kind_trainers() for names in trainer.name_lists if names.key == key
    }
