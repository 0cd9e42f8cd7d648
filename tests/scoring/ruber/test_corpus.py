"""RUBER's training corpus: DailyDialog and pairs-JSONL parsing, and every bad-corpus error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.metrics.ruber.corpus import (
    CorpusError,
    QueryReplyPair,
    read_corpus,
    split_validation,
    utterances,
)


def test_dailydialog_lines_give_consecutive_turn_pairs(tmp_path: Path) -> None:
    corpus = tmp_path / "dialogues_train.txt"
    corpus.write_text(
        "Hi . __eou__ Hello ! __eou__ How are you ? __eou__\nA __eou__ B __eou__\n", encoding="utf-8"
    )
    pairs = read_corpus(corpus, corpus_format="dailydialog")
    assert pairs == [
        QueryReplyPair("Hi .", "Hello !"),
        QueryReplyPair("Hello !", "How are you ?"),
        QueryReplyPair("A", "B"),
    ]
    # each dialogue turn once, for word2vec
    assert utterances(pairs) == ["Hi .", "Hello !", "How are you ?", "A", "B"]


def test_a_folder_reads_its_dialogue_text_files_but_not_the_label_files(tmp_path: Path) -> None:
    (tmp_path / "dialogues_test.txt").write_text("a __eou__ b __eou__ c __eou__\n", encoding="utf-8")
    (tmp_path / "dialogues_act_test.txt").write_text("1 2 3\n", encoding="utf-8")
    assert len(read_corpus(tmp_path, corpus_format="dailydialog")) == 2


def test_pairs_jsonl(tmp_path: Path) -> None:
    corpus = tmp_path / "pairs.jsonl"
    rows = [{"query": "q1", "reply": "r1"}, {"query": "q2", "reply": "r2", "extra": 1}]
    corpus.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n", encoding="utf-8")
    assert read_corpus(corpus, corpus_format="pairs-jsonl") == [
        QueryReplyPair("q1", "r1"),
        QueryReplyPair("q2", "r2"),
    ]


@pytest.mark.parametrize(
    ("content", "corpus_format", "message"),
    [
        (b"", "dailydialog", "empty corpus"),
        (b"only one __eou__", "dailydialog", "empty corpus"),
        (b"q __eou__ r __eou__\n", "dailydialog", "only 1 query-reply pair"),
        (b"ok __eou__ fine __eou__\nbad \xff byte __eou__ x __eou__\n", "dailydialog", "line 2: not UTF-8"),
        (b'{"query": "a", "reply": "b"}\n{"query": "a"\n', "pairs-jsonl", "line 2: not valid JSON"),
        (b'{"query": "a", "reply": "b"}\n{"query": "a"}\n', "pairs-jsonl", "line 2: lacks the key 'reply'"),
        (b'{"query": "a", "reply": 3}\n', "pairs-jsonl", "line 1: has a non-string 'reply'"),
        (b"[1, 2]\n", "pairs-jsonl", "line 1: expected an object"),
    ],
)
def test_bad_corpora_raise_errors_naming_file_and_line(
    tmp_path: Path, content: bytes, corpus_format: str, message: str
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(content)
    with pytest.raises(CorpusError, match=message) as raised:
        read_corpus(corpus, corpus_format=corpus_format)
    assert str(corpus) in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such corpus file"):
        read_corpus(tmp_path / "absent.txt", corpus_format="dailydialog")
    (tmp_path / "c.txt").write_text("a __eou__ b __eou__ c __eou__", encoding="utf-8")
    with pytest.raises(CorpusError, match="unknown corpus format"):
        read_corpus(tmp_path / "c.txt", corpus_format="csv")


def test_split_validation_is_seeded_and_disjoint() -> None:
    pairs = [QueryReplyPair(f"q{i}", f"r{i}") for i in range(100)]
    training, validation = split_validation(pairs, fraction=0.1, seed=3)
    assert len(validation) == 10
    assert len(training) == 90
    assert set(training).isdisjoint(validation)
    assert split_validation(pairs, fraction=0.1, seed=3) == (training, validation)


def test_real_dailydialog_train_split(shared_data: Path) -> None:
    pairs = read_corpus(shared_data / "dailydialog" / "train", corpus_format="dailydialog")
    # 87,171 utterances in 11,118 dialogues: one pair fewer than turns per dialogue
    assert len(pairs) == 87_171 - 11_118
