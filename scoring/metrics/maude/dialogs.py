"""MaUde's training data: whole dialogs, and the (context, reply) examples cut from them (Sinha et al. (2020),
section 3: the context c = {u_1 .. u_n} of a reply r = u_{n+1} is every turn before it).

Corpus formats (``read_dialogs``):

- ``dailydialog``: one dialog per line, turns separated by ``__eou__`` (``ruber.corpus``'s reader);
- ``dialogs-jsonl``: one ``{"turns": ["...", "..."]}`` object per line; a turn may also be an object with
  a ``"text"`` string (the app's own context format);
- ``pairs-jsonl``: RUBER's ``{"query", "reply"}`` lines, each a two-turn dialog (a context of one turn).

A bad corpus raises :class:`~scoring.metrics.ruber.corpus.CorpusError` naming the file and line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.metrics.ruber.corpus import (
    DAILYDIALOG,
    EOU,
    PAIRS_JSONL,
    CorpusError,
    QueryReplyPair,
    corpus_files,
    corpus_lines,
    jsonl_pairs,
    jsonl_records,
    seeded_split,
    training_provenance,
)

DIALOGS_JSONL = "dialogs-jsonl"
DIALOG_FORMATS = (DAILYDIALOG, DIALOGS_JSONL, PAIRS_JSONL)

Dialog = tuple[str, ...]


@dataclass(frozen=True)
class ContextReply:
    """One example: the turns before a reply (oldest first, at least one), the reply, and its dialog."""

    context: tuple[str, ...]
    reply: str
    dialog: int


def read_dialogs(paths: Path | Sequence[Path], *, corpus_format: str) -> list[Dialog]:
    """The dialogs (each at least two non-empty turns) of one or more files in ``corpus_format``."""
    if corpus_format not in DIALOG_FORMATS:
        raise CorpusError(f"unknown corpus format {corpus_format!r}; known: {', '.join(DIALOG_FORMATS)}")
    pattern_format = PAIRS_JSONL if corpus_format == DIALOGS_JSONL else corpus_format  # "*.jsonl" in a folder
    dialogs: list[Dialog] = []
    files = corpus_files(paths, pattern_format)
    for path in files:
        if corpus_format == DAILYDIALOG:
            dialogs.extend(dailydialog_dialogs(corpus_lines(path)))
        elif corpus_format == PAIRS_JSONL:
            dialogs.extend((pair.query, pair.reply) for pair in jsonl_pairs(path))
        else:
            dialogs.extend(_jsonl_dialogs(path))
    dialogs = [dialog for dialog in dialogs if len(dialog) >= 2]
    if len(dialogs) < 2:
        names = ", ".join(str(path) for path in files)
        raise CorpusError(
            f"{names}: {len(dialogs)} dialog(s) of two or more turns; training needs at least 2 "
            "(a random-utterance negative comes from another dialog)"
        )
    return dialogs


def dailydialog_dialogs(lines: Sequence[str]) -> list[Dialog]:
    """The turns of each DailyDialog line (empty turns dropped)."""
    dialogs = []
    for line in lines:
        turns = tuple(turn.strip() for turn in line.split(EOU))
        dialogs.append(tuple(turn for turn in turns if turn))
    return dialogs


def examples(dialogs: Sequence[Dialog], *, context_turns: int | None = None) -> list[ContextReply]:
    """Every reply u_{i+1} (i >= 1) of every dialog with its context u_1 .. u_i, cut to the last
    ``context_turns`` turns when given (None: the whole history, the paper's setting)."""
    if context_turns is not None and context_turns < 1:
        raise ValueError(f"context_turns must be at least 1, got {context_turns}")
    found = []
    for number, dialog in enumerate(dialogs):
        for index in range(1, len(dialog)):
            start = 0 if context_turns is None else max(0, index - context_turns)
            found.append(ContextReply(tuple(dialog[start:index]), dialog[index], number))
    return found


def split_dialogs(
    dialogs: Sequence[Dialog], *, fraction: float = 0.05, seed: int = 0
) -> tuple[list[Dialog], list[Dialog]]:
    """(training, validation) dialogs by a seeded shuffle, for a corpus without a validation split (whole
    dialogs go to one side, so no validation reply's context was seen in training)."""
    return seeded_split(dialogs, fraction=fraction, seed=seed, items="dialogs")


def _jsonl_dialogs(path: Path) -> list[Dialog]:
    dialogs = []
    for number, record in jsonl_records(path):
        turns = record.get("turns") if isinstance(record, dict) else None
        if not isinstance(turns, list):
            raise CorpusError(f"{path}, line {number}: expected an object with a 'turns' list")
        texts = []
        for position, turn in enumerate(turns, start=1):
            text = turn.get("text") if isinstance(turn, dict) else turn
            if not isinstance(text, str):
                raise CorpusError(
                    f"{path}, line {number}, turn {position}: a turn is a string or an object with a "
                    "'text' string"
                )
            if text.strip():
                texts.append(text.strip())
        dialogs.append(tuple(texts))
    return dialogs


def dialogs_provenance(
    description: str, dialogs: Sequence[Dialog], validation_dialogs: Sequence[Dialog]
) -> dict[str, object]:
    """``training_provenance`` of a model trained on whole dialogs (MaUde, Cross-RUBER): the corpus
    fingerprinted over each dialog as (its earlier turns joined by ``__eot__``, its last turn) and counted
    in dialogs, not pairs."""

    def as_pairs(items: Sequence[Dialog]) -> list[QueryReplyPair]:
        return [QueryReplyPair(" __eot__ ".join(dialog[:-1]), dialog[-1]) for dialog in items]

    provenance = training_provenance(description, as_pairs(dialogs), as_pairs(validation_dialogs))
    recorded = provenance["corpus"]
    assert isinstance(recorded, dict)
    corpus = {
        key: value for key, value in recorded.items() if key not in ("training_pairs", "validation_pairs")
    }
    corpus.update(training_dialogs=len(dialogs), validation_dialogs=len(validation_dialogs))
    return {**provenance, "corpus": corpus}
