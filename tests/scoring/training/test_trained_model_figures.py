"""The figures of a trained model and the outcome of its training in words: the epochs run and
the epoch kept by early stopping, the accuracy of the cell the metric scores with, and a validation
accuracy near chance (0.5) said aloud."""

from __future__ import annotations

from scoring.training.model_figures import figures_compute, training_summary

RUBER_CURVE = [
    {"epoch": 1, "validation_accuracy": 0.50},
    {"epoch": 2, "validation_accuracy": 0.512},
    {"epoch": 3, "validation_accuracy": 0.505},
    {"epoch": 4, "validation_accuracy": 0.508},
]


def test_ruber_stopped_early_names_the_epoch_it_kept_and_flags_an_accuracy_near_chance() -> None:
    figures = figures_compute(
        config={"epochs": 10, "best_epoch": 2, "corpus": {"training_pairs": 900}},
        curve=RUBER_CURVE,
        path=None,
        kind="ruber",
    )
    assert (figures.epochs, figures.kept_epoch, figures.max_epochs) == (4, 2, 10)
    assert figures.stopped_early
    assert figures.validation_accuracy == 0.512
    assert figures.near_chance
    assert figures.trained_on == "900 pairs"
    summary = training_summary(figures)
    assert summary.startswith("stopped early after epoch 4 of 10 (no better validation result), kept epoch 2")
    assert "validation accuracy 0.512 — near chance (0.5)" in summary


def test_a_full_run_well_above_chance_is_not_flagged() -> None:
    curve = [{"epoch": 1, "validation_accuracy": 0.7}, {"epoch": 2, "validation_accuracy": 0.8}]
    figures = figures_compute(config={"epochs": 2, "best_epoch": 2}, curve=curve, path=None, kind="ruber")
    assert not figures.stopped_early
    assert not figures.near_chance
    assert training_summary(figures) == "2 epochs, kept epoch 2; validation accuracy 0.800"


def test_bert_ruber_figures_are_the_scoring_cells_and_maude_counts_dialogs() -> None:
    bert = figures_compute(
        config={
            "epochs": 5,
            "results": {
                "bert-max-ce": {"best_epoch": 2, "validation_accuracy": 0.74},
                "bert-mean-ce": {"best_epoch": 5, "validation_accuracy": 0.9},
            },
        },
        curve={
            "bert-max-ce": [{"epoch": n} for n in (1, 2, 3, 4)],
            "bert-mean-ce": [{"epoch": n} for n in range(1, 6)],
        },
        path=None,
        kind="bert-ruber",
    )
    assert (bert.scoring_cell, bert.validation_accuracy, bert.epochs, bert.kept_epoch) == (
        "bert-max-ce",
        0.74,
        4,
        2,
    )
    assert training_summary(bert).startswith("cell bert-max-ce: stopped early after epoch 4 of 5")
    maude = figures_compute(
        config={"corpus": {"training_dialogs": 800}, "results": {"maude": {"best_epoch": 1}}},
        curve={"maude": [{"epoch": 1}]},
        path=None,
        pairs=5600,
        kind="maude",
    )
    assert (maude.pairs, maude.dialogs, maude.trained_on) == (None, 800, "800 dialogs")
