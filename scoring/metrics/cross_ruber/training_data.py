"""Cross-RUBER's training examples and their candidate replies (Tao et al. (2018) and Sinha et al. (2020)).

An example is a reply of a dialog with its last ``context_turns`` turns (Sinha et al. (2020)'s context-reply
examples, :func:`scoring.metrics.maude.dialogs.examples`). Its candidates are the true reply first, then
one negative of each kind in ``config.negatives``:

- ``batch``: the true reply of another example of the same mini-batch (from another dialog);
- ``utterance``: a random reply of another dialog, drawn anew every epoch (RUBER's negative sampling,
  Tao et al. (2018) section 3.2; MaUde's random utterance, Sinha et al. (2020) section 3);
- ``syntactic``: one corruption of the true reply fixed before training (its kind at random among word
  order, word drop and word repeat: MaUde's syntactic negatives, reused from ``maude.negatives``), fixed
  so that its token states are computed once;
- ``dialog``: another turn of the same dialog (drawn every epoch): on topic, yet not the reply;
- ``echo``: one of the context's own turns (drawn every epoch) given back as the reply: a cross-encoder
  that learnt "shares words with the context" scores such a copy highest, and retrieval systems return
  them (GRADE's ranker outputs include context turns verbatim).

Validation examples (a seeded sample of ``validation_examples``) get every negative fixed once.
Everything here is numpy and Python; texts become rows of one :class:`~scoring.metrics.maude.inputs.TextIndex`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.cross_ruber.config import BATCH, DIALOG, ECHO, SYNTACTIC, UTTERANCE, CrossRuberConfig
from scoring.metrics.maude.dialogs import Dialog, examples
from scoring.metrics.maude.inputs import TextIndex
from scoring.metrics.maude.negatives import random_other_indices, syntactic_negative


@dataclass(frozen=True)
class ExampleSet:
    """Examples as text rows: ``contexts[i]`` (turn rows, oldest first), ``replies[i]``, ``dialogs[i]``;
    ``syntactic[i]`` the row of reply i's fixed corruption (when that negative is used);
    ``dialog_turns[d]`` the rows of every turn of dialog d."""

    contexts: list[tuple[int, ...]]
    replies: NDArray[np.int64]
    dialogs: NDArray[np.int64]
    syntactic: NDArray[np.int64] | None
    dialog_turns: list[NDArray[np.int64]]

    def __len__(self) -> int:
        return len(self.replies)


def example_set(
    dialogs: Sequence[Dialog],
    index: TextIndex,
    config: CrossRuberConfig,
    rng: random.Random,
    *,
    limit: int | None = None,
) -> ExampleSet:
    """The examples of ``dialogs`` as rows of ``index`` (only the texts they use are added), at most
    ``limit`` of them (a sample seeded by ``config.seed``)."""
    found = examples(dialogs, context_turns=config.context_turns)
    if limit is not None and len(found) > limit:
        chosen = np.sort(np.random.default_rng(config.seed).choice(len(found), limit, replace=False))
        found = [found[i] for i in chosen]
    contexts = [tuple(index.row(turn) for turn in example.context) for example in found]
    replies = np.array([index.row(example.reply) for example in found], dtype=np.int64)
    syntactic = None
    if SYNTACTIC in config.negatives:
        syntactic = np.array(
            [
                index.row(
                    syntactic_negative(
                        example.reply,
                        rng.choice(config.syntactic_kinds),
                        rng,
                        drop_fraction=config.drop_fraction,
                    )
                )
                for example in found
            ],
            dtype=np.int64,
        )
    used = {example.dialog for example in found} if DIALOG in config.negatives else set()
    turns = [
        np.array([index.row(turn) for turn in dialog] if number in used else [], dtype=np.int64)
        for number, dialog in enumerate(dialogs)
    ]
    return ExampleSet(
        contexts=contexts,
        replies=replies,
        dialogs=np.array([example.dialog for example in found], dtype=np.int64),
        syntactic=syntactic,
        dialog_turns=turns,
    )


def candidate_rows(
    found: ExampleSet,
    batch: NDArray[np.int64],
    negatives: Sequence[str],
    rng: np.random.Generator,
    *,
    utterances: NDArray[np.int64] | None = None,
) -> NDArray[np.int64]:
    """[len(batch), 1 + len(negatives)] text rows: each example's true reply, then its negatives in the
    order of ``negatives``. ``utterances`` are this epoch's random-utterance rows (per example)."""
    columns = [found.replies[batch]]
    for kind in negatives:
        if kind == BATCH:
            columns.append(found.replies[batch[in_batch_partners(found, batch)]])
        elif kind == UTTERANCE:
            assert utterances is not None
            columns.append(utterances[batch])
        elif kind == SYNTACTIC:
            assert found.syntactic is not None
            columns.append(found.syntactic[batch])
        elif kind == DIALOG:
            columns.append(dialog_negatives(found, batch, rng, utterances))
        elif kind == ECHO:
            columns.append(echo_negatives(found, batch, rng, utterances))
        else:
            raise ValueError(f"unknown negative {kind!r}")
    return np.stack(columns, axis=1)


def in_batch_partners(found: ExampleSet, batch: NDArray[np.int64]) -> NDArray[np.int64]:
    """For each position i of ``batch``, the position of another example whose reply serves as i's
    negative: the next one (cyclically) from another dialog with another reply text."""
    size = len(batch)
    dialogs, replies = found.dialogs[batch], found.replies[batch]
    partners = np.empty(size, dtype=np.int64)
    for position in range(size):
        partners[position] = (position + 1) % size
        for shift in range(1, size):
            other = (position + shift) % size
            if dialogs[other] != dialogs[position] and replies[other] != replies[position]:
                partners[position] = other
                break
    return partners


def dialog_negatives(
    found: ExampleSet,
    batch: NDArray[np.int64],
    rng: np.random.Generator,
    fallback: NDArray[np.int64] | None,
) -> NDArray[np.int64]:
    """Another turn of each example's dialog (any position, its text not the reply's); an example whose
    dialog has none takes its random utterance (``fallback``) or, without one, its own syntactic row."""
    chosen = np.empty(len(batch), dtype=np.int64)
    for position, example in enumerate(batch):
        turns = found.dialog_turns[found.dialogs[example]]
        others = turns[turns != found.replies[example]]
        if len(others):
            chosen[position] = others[rng.integers(0, len(others))]
        elif fallback is not None:
            chosen[position] = fallback[example]
        else:
            assert found.syntactic is not None, (
                "a dialog negative needs another turn, an utterance or a corruption"
            )
            chosen[position] = found.syntactic[example]
    return chosen


def echo_negatives(
    found: ExampleSet,
    batch: NDArray[np.int64],
    rng: np.random.Generator,
    fallback: NDArray[np.int64] | None,
) -> NDArray[np.int64]:
    """One turn of each example's own context (at random), its text not the reply's; else the fallback
    as :func:`dialog_negatives`."""
    chosen = np.empty(len(batch), dtype=np.int64)
    for position, example in enumerate(batch):
        turns = np.array(found.contexts[example], dtype=np.int64)
        others = turns[turns != found.replies[example]]
        if len(others):
            chosen[position] = others[rng.integers(0, len(others))]
        elif fallback is not None:
            chosen[position] = fallback[example]
        else:
            assert found.syntactic is not None, (
                "an echo negative needs a context turn, an utterance or a corruption"
            )
            chosen[position] = found.syntactic[example]
    return chosen


def random_utterances(found: ExampleSet, rng: np.random.Generator) -> NDArray[np.int64]:
    """One random reply of another dialog per example (Sinha et al. (2020)'s random utterance)."""
    everyone = np.arange(len(found), dtype=np.int64)
    return found.replies[random_other_indices(found.dialogs, found.replies, everyone, rng)]


def fixed_validation_candidates(found: ExampleSet, negatives: Sequence[str], seed: int) -> NDArray[np.int64]:
    """[E, 1 + len(negatives)] candidate rows of every validation example, drawn once (``seed``); the
    batch negative's partners come from one seeded permutation cut in batches of 32."""
    rng = np.random.default_rng(seed)
    utterances = random_utterances(found, rng) if set(negatives) & {UTTERANCE, DIALOG, ECHO} else None
    order = rng.permutation(len(found))
    rows = np.empty((len(found), 1 + len(negatives)), dtype=np.int64)
    for start in range(0, len(order), 32):
        batch = order[start : start + 32]
        if len(batch) < 2:  # a lone last example: its batch partner comes from the previous batch
            batch = order[start - 1 : start + 1]
            rows[batch[1:]] = candidate_rows(found, batch, negatives, rng, utterances=utterances)[1:]
            continue
        rows[batch] = candidate_rows(found, batch, negatives, rng, utterances=utterances)
    return rows
