"""MaUde's negative samplers and dialog corpora (Sinha et al., 2020, section 3): each corruption does what its name
says, never returns its input, and is reproducible; corpora are read with errors that name the line."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from scoring.metrics.maude.dialogs import examples, read_dialogs, split_dialogs
from scoring.metrics.maude.negatives import (
    random_other_indices,
    syntactic_negative,
    word_drop,
    word_order,
    word_repeat,
)
from scoring.metrics.ruber.corpus import CorpusError

REPLIES = [
    "I would love to come to the party on Saturday .",
    "Sure , the station is two blocks away from here .",
    "No .",
    "ok ok",
    "That sounds great , thank you so much !",
]


@pytest.mark.parametrize("text", REPLIES)
def test_word_order_keeps_the_words_and_changes_the_order(text: str) -> None:
    rng = random.Random(1)
    shuffled = word_order(text, rng)
    assert shuffled != text
    if len(set(text.split())) >= 2:
        assert Counter(shuffled.split()) == Counter(text.split())
    else:  # one distinct word: no other order exists, a repeat takes its place
        assert len(shuffled.split()) > len(text.split())


@pytest.mark.parametrize("text", REPLIES)
def test_word_drop_is_shorter_and_keeps_the_order_of_the_rest(text: str) -> None:
    dropped = word_drop(text, random.Random(2), fraction=0.3)
    words, kept = text.split(), dropped.split()
    if len(words) < 2:
        assert len(kept) > len(words)  # nothing to drop from one word: repeated instead
        return
    assert 1 <= len(kept) < len(words)
    remaining = iter(words)
    assert all(word in remaining for word in kept)  # a subsequence of the original
    assert len(words) - len(kept) == max(1, min(len(words) - 1, round(0.3 * len(words))))


@pytest.mark.parametrize("text", REPLIES)
def test_word_repeat_contains_a_repeated_span(text: str) -> None:
    repeated = word_repeat(text, random.Random(3)).split()
    words = text.split()
    assert len(repeated) > len(words)

    def has_repeated_span(tokens: list[str]) -> bool:
        for span in range(1, 4):
            for start in range(len(tokens) - 2 * span + 1):
                if tokens[start : start + span] == tokens[start + span : start + 2 * span]:
                    return True
        return False

    assert has_repeated_span(repeated)
    # removing the extra words gives the original back: the repeat is an insertion, nothing else changes
    extra = len(repeated) - len(words)
    assert any(
        repeated[:start] + repeated[start + extra :] == words for start in range(len(repeated) - extra + 1)
    )


def test_corruptions_are_reproducible_and_reject_unknown_kinds() -> None:
    text = REPLIES[0]
    for kind in ("order", "drop", "repeat"):
        first = syntactic_negative(text, kind, random.Random(9), drop_fraction=0.3)
        assert first == syntactic_negative(text, kind, random.Random(9), drop_fraction=0.3)
    with pytest.raises(ValueError, match="unknown syntactic negative 'swap'"):
        syntactic_negative(text, "swap", random.Random(0), drop_fraction=0.3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        word_drop(text, random.Random(0), fraction=1.0)


def test_random_utterance_comes_from_another_dialog_with_another_text() -> None:
    groups = np.repeat(np.arange(20), 5)  # 20 dialogs of 5 examples
    texts = np.arange(100) % 37  # some texts repeat across dialogs
    chosen = random_other_indices(groups, texts, np.arange(100), np.random.default_rng(0))
    assert (groups[chosen] != groups).all()
    assert (texts[chosen] != texts).all()
    again = random_other_indices(groups, texts, np.arange(100), np.random.default_rng(0))
    assert (chosen == again).all()


def test_examples_cut_the_context_to_the_last_turns() -> None:
    dialogs = [("a", "b", "c", "d"), ("x", "y")]
    found = examples(dialogs)
    assert [(e.context, e.reply, e.dialog) for e in found] == [
        (("a",), "b", 0),
        (("a", "b"), "c", 0),
        (("a", "b", "c"), "d", 0),
        (("x",), "y", 1),
    ]
    assert [e.context for e in examples(dialogs, context_turns=1)][:3] == [("a",), ("b",), ("c",)]
    with pytest.raises(ValueError, match="at least 1"):
        examples(dialogs, context_turns=0)


def test_dialog_corpora_in_every_format(tmp_path: Path) -> None:
    daily = tmp_path / "dialogues_train.txt"
    daily.write_text(
        "Hi . __eou__ Hello ! __eou__ How are you ? __eou__\nA __eou__ B __eou__\n", encoding="utf-8"
    )
    assert read_dialogs(daily, corpus_format="dailydialog") == [
        ("Hi .", "Hello !", "How are you ?"),
        ("A", "B"),
    ]
    jsonl = tmp_path / "dialogs.jsonl"
    jsonl.write_text(
        json.dumps({"turns": ["one", {"speaker": "B", "text": "two"}]})
        + "\n\n"
        + json.dumps({"turns": ["x", "y"]})
        + "\n",
        encoding="utf-8",
    )
    assert read_dialogs(jsonl, corpus_format="dialogs-jsonl") == [("one", "two"), ("x", "y")]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "\n".join(json.dumps({"query": f"q{i}", "reply": f"r{i}"}) for i in range(3)), encoding="utf-8"
    )
    assert read_dialogs(pairs, corpus_format="pairs-jsonl")[0] == ("q0", "r0")


def test_bad_dialog_corpora_name_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"turns": ["a", "b"]}) + "\n" + json.dumps({"turns": ["a", 3]}) + "\n", encoding="utf-8"
    )
    with pytest.raises(CorpusError, match=r"bad\.jsonl, line 2, turn 2: a turn is a string"):
        read_dialogs(bad, corpus_format="dialogs-jsonl")
    bad.write_text('{"lines": []}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"line 1: expected an object with a 'turns' list"):
        read_dialogs(bad, corpus_format="dialogs-jsonl")
    bad.write_text(json.dumps({"turns": ["only one turn"]}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="0 dialog"):
        read_dialogs(bad, corpus_format="dialogs-jsonl")
    with pytest.raises(CorpusError, match="need 4"):
        split_dialogs([("a", "b")] * 3)
