"""The training corpus of RUBER's unreferenced scorer: query-reply pairs (Tao et al., 2018, sections 3.2 and 4.1).

RUBER trains its word2vec embeddings and its neural scorer s_U on (query, reply) pairs without human
labels (negative sampling draws the wrong replies). Two sources are read:

- DailyDialog text (``dialogues_*.txt``): one dialogue per line, turns separated by ``__eou__``; every
  consecutive (turn i, turn i + 1) of a dialogue is a pair.
- a pairs JSONL file: one ``{"query": ..., "reply": ...}`` object per line (blank lines are skipped).

A bad corpus raises :class:`CorpusError`, naming the file (and line, where there is one): non-UTF-8
bytes, invalid JSON, a missing or non-string key, or fewer than two pairs in all (negative sampling needs
another pair's reply).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

DAILYDIALOG = "dailydialog"
PAIRS_JSONL = "pairs-jsonl"
CORPUS_FORMATS = (DAILYDIALOG, PAIRS_JSONL)
EOU = "__eou__"
ItemT = TypeVar("ItemT")


class CorpusError(ValueError):
    """A corpus file that cannot be used for training, with the file (and line) that is wrong."""


@dataclass(frozen=True)
class QueryReplyPair:
    query: str
    reply: str


def read_corpus(paths: Path | Sequence[Path], *, corpus_format: str) -> list[QueryReplyPair]:
    """All pairs of one or more files in ``corpus_format`` ("dailydialog" or "pairs-jsonl"), in order.

    A folder stands for the ``dialogues_*.txt`` files in it (DailyDialog) or its ``*.jsonl`` files.
    """
    files = corpus_files(paths, corpus_format)
    pairs: list[QueryReplyPair] = []
    for path in files:
        if corpus_format == DAILYDIALOG:
            pairs.extend(_dailydialog_pairs(path))
        elif corpus_format == PAIRS_JSONL:
            pairs.extend(jsonl_pairs(path))
        else:
            raise CorpusError(f"unknown corpus format {corpus_format!r}; known: {', '.join(CORPUS_FORMATS)}")
    names = ", ".join(str(path) for path in files)
    if not pairs:
        raise CorpusError(f"{names}: empty corpus, no query-reply pair found")
    if len(pairs) < 2:
        raise CorpusError(
            f"{names}: only {len(pairs)} query-reply pair; training needs at least 2 "
            "(a negative sample is another pair's reply)"
        )
    return pairs


def dailydialog_pairs(lines: Iterable[str]) -> list[QueryReplyPair]:
    """Every consecutive (turn i, turn i + 1) of each dialogue line; empty turns are dropped first."""
    pairs: list[QueryReplyPair] = []
    for line in lines:
        turns = [turn.strip() for turn in line.split(EOU)]
        turns = [turn for turn in turns if turn]
        pairs.extend(QueryReplyPair(q, r) for q, r in itertools.pairwise(turns))
    return pairs


def split_validation(
    pairs: Sequence[QueryReplyPair], *, fraction: float = 0.05, seed: int = 0
) -> tuple[list[QueryReplyPair], list[QueryReplyPair]]:
    """(training, validation) by a seeded shuffle, for a corpus that has no validation split of its own.

    The validation part has at least 2 pairs (for negatives) and the training part keeps at least 2.
    """
    return seeded_split(pairs, fraction=fraction, seed=seed, items="pairs")


def seeded_split(
    found: Sequence[ItemT], *, fraction: float, seed: int, items: str
) -> tuple[list[ItemT], list[ItemT]]:
    """(training, validation) parts of ``found`` (pairs, MaUde's dialogs), each in the corpus's order: a
    seeded shuffle's first ``fraction`` (at least 2, leaving at least 2) is held out."""
    if len(found) < 4:
        raise CorpusError(f"{len(found)} {items} cannot be split into training and validation (need 4)")
    order = list(range(len(found)))
    random.Random(seed).shuffle(order)
    size = min(max(2, round(len(found) * fraction)), len(found) - 2)
    validation = [found[i] for i in sorted(order[:size])]
    training = [found[i] for i in sorted(order[size:])]
    return training, validation


def utterances(pairs: Sequence[QueryReplyPair]) -> list[str]:
    """The utterances of ``pairs``, each dialogue turn once: every reply, and a query only where it is not
    the previous pair's reply (DailyDialog pairs overlap: turn i + 1 is a reply and then a query). These
    are word2vec's sentences, so that a turn inside a dialogue is not counted twice."""
    sentences = []
    previous_reply: str | None = None
    for pair in pairs:
        if pair.query != previous_reply:
            sentences.append(pair.query)
        sentences.append(pair.reply)
        previous_reply = pair.reply
    return sentences


def corpus_files(paths: Path | Sequence[Path], corpus_format: str) -> list[Path]:
    given = [Path(paths)] if isinstance(paths, str | Path) else [Path(path) for path in paths]
    pattern = "dialogues_*.txt" if corpus_format == DAILYDIALOG else "*.jsonl"
    files: list[Path] = []
    for path in given:
        if path.is_dir():
            # dialogues_act_*.txt and dialogues_emotion_*.txt hold labels, not text
            found = sorted(
                p for p in path.glob(pattern) if not p.name.startswith(("dialogues_act", "dialogues_emotion"))
            )
            if not found:
                raise CorpusError(f"{path}: no {pattern} file in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CorpusError(f"{path}: no such corpus file or folder")
    if not files:
        raise CorpusError("no corpus file given")
    return files


def corpus_lines(path: Path) -> list[str]:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise CorpusError(
            f"{path}, line {line}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
    return text.removeprefix("\ufeff").splitlines()


def _dailydialog_pairs(path: Path) -> list[QueryReplyPair]:
    return dailydialog_pairs(corpus_lines(path))


def jsonl_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of every non-blank line of a JSON-lines corpus file (pairs, MaUde's dialogs);
    a line that is not JSON stops the reading with the file and line."""
    for number, line in enumerate(corpus_lines(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise CorpusError(f"{path}, line {number}: not valid JSON ({error.msg})") from None
        except RecursionError:  # arrays or objects nested about 1,000 deep exhaust the parser's recursion
            raise CorpusError(f"{path}, line {number}: JSON nested too deep to read") from None
        yield number, record


def jsonl_pairs(path: Path) -> list[QueryReplyPair]:
    pairs = []
    for number, record in jsonl_records(path):
        if not isinstance(record, dict):
            raise CorpusError(f"{path}, line {number}: expected an object with 'query' and 'reply'")
        for key in ("query", "reply"):
            if not isinstance(record.get(key), str):
                problem = "lacks the key" if key not in record else "has a non-string"
                raise CorpusError(f"{path}, line {number}: {problem} {key!r}")
        pairs.append(QueryReplyPair(record["query"], record["reply"]))
    return pairs


def training_provenance(
    description: str, pairs: Sequence[QueryReplyPair], validation_pairs: Sequence[QueryReplyPair]
) -> dict[str, object]:
    """What a trained artifact's config.json records about its data and software: the corpus (description,
    sizes, sha256 of the pairs in order) and the versions of the libraries that shaped the weights."""
    import platform

    import gensim
    import numpy as np
    import torch

    def fingerprint(items: Sequence[QueryReplyPair]) -> str:
        digest = hashlib.sha256()
        for pair in items:
            digest.update(f"{pair.query}\t{pair.reply}\n".encode())
        return digest.hexdigest()

    return {
        "corpus": {
            "description": description,
            "training_pairs": len(pairs),
            "validation_pairs": len(validation_pairs),
            "training_sha256": fingerprint(pairs),
            "validation_sha256": fingerprint(validation_pairs),
        },
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "gensim": gensim.__version__,
            "numpy": np.__version__,
        },
    }
