"""The names of BERT-RUBER's factorial cells (Ghazarian et al., 2019, Table 3): 2 embeddings x 3 representations x 2
objectives, parsed strictly, and a package that imports without torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scoring.metrics.bert_ruber import ALL_CELLS, DEFAULT_CELL, Cell, parse_cell
from scoring.metrics.bert_ruber.cells import parse_cells

REPOSITORY = Path(__file__).resolve().parents[3]


def test_twelve_cells_in_a_fixed_order_with_the_papers_best_as_default() -> None:
    assert len(ALL_CELLS) == len(set(ALL_CELLS)) == 12
    assert ALL_CELLS[:3] == ("word2vec-rnn-ranking", "word2vec-rnn-ce", "word2vec-max-ranking")
    assert ALL_CELLS[-1] == "bert-mean-ce"
    assert DEFAULT_CELL == "bert-max-ce"
    assert DEFAULT_CELL in ALL_CELLS


def test_parse_cell_round_trips_every_name() -> None:
    for name in ALL_CELLS:
        assert parse_cell(name).name == str(parse_cell(name)) == name
    assert parse_cell("bert-max-ce") == Cell("bert", "max", "ce")
    assert parse_cell("word2vec-rnn-ranking").pooled is False
    assert parse_cell("bert-mean-ranking").pooled is True


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("glove-max-ce", "unknown embedding 'glove'; choose one of word2vec, bert"),
        ("bert-lstm-ce", "unknown representation 'lstm'; choose one of rnn, max, mean"),
        ("bert-max-hinge", "unknown objective 'hinge'; choose one of ranking, ce"),
        ("bert-max", "is not <embedding>-<representation>-<objective>"),
        ("", "is not <embedding>-<representation>-<objective>"),
        ("BERT-max-ce", "unknown embedding 'BERT'"),
    ],
)
def test_parse_cell_names_the_bad_part_and_the_choices(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_cell(name)


def test_parse_cells_deduplicates_in_canonical_order_and_refuses_none() -> None:
    cells = parse_cells(["bert-max-ce", "word2vec-rnn-ranking", "bert-max-ce"])
    assert [cell.name for cell in cells] == ["word2vec-rnn-ranking", "bert-max-ce"]
    with pytest.raises(ValueError, match="no cell to train"):
        parse_cells([])


def test_importing_the_package_and_its_artifact_module_does_not_import_torch() -> None:
    code = (
        "import sys, scoring.metrics.bert_ruber, scoring.metrics.bert_ruber.artifact; "
        "print(sorted(m for m in ('torch', 'gensim', 'transformers') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPOSITORY
    )
    assert result.stdout.strip() == "[]"
