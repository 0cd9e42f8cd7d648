"""The inputs the metric tester (:mod:`tests.scoring.metric_tester`) scores: a batch of replies, their references,
their contexts and the system that wrote each, and the fixed batches that tests share.

A batch is laid out as a scoring run reads a study (items ordered context by context, every reply of one context
sharing the context's references), so that the tester can score it as the engine does: in one call, in slices,
system by system. :data:`DIALOG_SAMPLE` is built in (a fresh clone scores it without ../shared);
:func:`dailydialog_batch` reads DailyDialog's test set from ../shared/data and skips, saying so, without it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from scoring.metrics.system_specs import ContextOutputs

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
DAILYDIALOG_TEST = SHARED_DATA / "dailydialog" / "test" / "dialogues_test.txt"


@dataclass(frozen=True)
class MetricBatch:
    """Items to score: ``references[i]`` holds every reference of item i, ``queries[i]`` its last context turn
    (the context's key: items with equal queries and references answer one context) and ``systems[i]`` the
    system that wrote it."""

    hypotheses: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]
    queries: tuple[str, ...]
    systems: tuple[str, ...]

    def __post_init__(self) -> None:
        lengths = {len(self.hypotheses), len(self.references), len(self.queries), len(self.systems)}
        if len(lengths) != 1:
            raise ValueError(f"a batch needs one reference list, query and system per item, got {lengths}")

    @classmethod
    def of(
        cls,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        *,
        queries: Sequence[str] | None = None,
        systems: Sequence[str] | None = None,
    ) -> MetricBatch:
        """A batch of one system in which every item answers a context of its own, unless told otherwise."""
        return cls(
            tuple(hypotheses),
            tuple(tuple(refs) for refs in references),
            tuple(queries if queries is not None else (f"turn {index}" for index in range(len(hypotheses)))),
            tuple(systems if systems is not None else ("system",) * len(hypotheses)),
        )

    @classmethod
    def of_pairs(cls, pairs: Sequence[tuple[str, Sequence[str]]]) -> MetricBatch:
        return cls.of([hypothesis for hypothesis, _ in pairs], [refs for _, refs in pairs])

    @classmethod
    def of_tokens(cls, pairs: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]]) -> MetricBatch:
        """Already tokenized pairs, written as whitespace-joined text: the engine's ``tokenizer="none"``
        gives back exactly these tokens."""
        return cls.of(
            [" ".join(hypothesis) for hypothesis, _ in pairs],
            [[" ".join(reference) for reference in refs] for _, refs in pairs],
        )

    @classmethod
    def of_contexts(cls, contexts: Sequence[ContextOutputs], system: str = "system") -> MetricBatch:
        """One system's outputs, context by context (each output with its context's references): what
        :meth:`contexts_of` gives back."""
        items = [
            (output, context.references, index)
            for index, context in enumerate(contexts)
            for output in context.outputs
        ]
        return cls.of(
            [output for output, _, _ in items],
            [refs for _, refs, _ in items],
            queries=[f"context {index}" for _, _, index in items],
            systems=[system] * len(items),
        )

    def __len__(self) -> int:
        return len(self.hypotheses)

    def subset(self, indices: Sequence[int]) -> MetricBatch:
        return MetricBatch(
            tuple(self.hypotheses[i] for i in indices),
            tuple(self.references[i] for i in indices),
            tuple(self.queries[i] for i in indices),
            tuple(self.systems[i] for i in indices),
        )

    def system_names(self) -> list[str]:
        return list(dict.fromkeys(self.systems))

    def indices_of(self, system: str) -> list[int]:
        return [index for index, name in enumerate(self.systems) if name == system]

    def uneven_slices(self) -> list[list[int]]:
        """Three slices of unequal sizes (one item, about a third, the rest), none empty where the batch has
        three items or more: a metric whose per-item values depend on the slicing differs on them."""
        size = len(self)
        cuts = sorted({0, min(1, size), min(size, 1 + max(1, (size - 1) // 3)), size})
        return [list(range(start, end)) for start, end in itertools.pairwise(cuts) if end > start]

    def contexts_of(self, system: str) -> list[ContextOutputs]:
        """The system's outputs grouped by context (in first-seen order) with the context's references, as a
        scoring run hands them to a system-level metric."""
        grouped: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for index in self.indices_of(system):
            grouped.setdefault((self.queries[index], self.references[index]), []).append(
                self.hypotheses[index]
            )
        return [ContextOutputs(outputs, list(refs)) for (_, refs), outputs in grouped.items()]


def _dialog_sample() -> MetricBatch:
    """Three systems answering six contexts, in DailyDialog's spelling (spaced punctuation, curly quotes) and
    as people type (capitals, glued punctuation, doubled spaces), with one to three references per context and
    the edge cases sentence scores treat specially: an empty reply, a one-word reply, a reply equal to its
    reference, a reply sharing nothing with it."""
    contexts: list[tuple[str, list[str], list[str]]] = [
        (
            "how are you doing today ?",
            ["i am fine , thank you .", "Fine, thanks. And you?"],
            ["i am fine , thank you .", "I'm fine, thanks! And you?", "fine"],
        ),
        (
            "what do you think of the weather ?",
            ["the weather is lovely today", "it is raining", "nice"],
            ["the weather is nice today", "It ’ s  lovely , isn ’ t it ?", ""],
        ),
        (
            "would you like to buy some apples ?",
            ["oh , umm , no thanks .", "sure , how much does it cost ?"],
            ["no", "Sure , how much ?", "what a lovely day"],
        ),
        (
            "when shall we meet ?",
            ["OK, see you at the station at five."],
            [
                "Let's meet at the train station at 5 pm.",
                "  see you tomorrow  ",
                "at five , at the station .",
            ],
        ),
        (
            "what do you want for dinner ?",
            ["how about pizza for dinner ?", "dinner at eight ?"],
            ["what do you want for dinner ?", "pizza", "I do n't know , the the the pizza maybe ?"],
        ),
        (
            "did you see the film last night ?",
            ["yes , the movie was great .", "no , i was running late"],
            ["the film was great", "she was running to the stations", "Café naïve ’ über !"],
        ),
    ]
    systems = ("echo", "terse", "chatty")
    hypotheses, references, queries, system_of = [], [], [], []
    for query, refs, replies in contexts:
        for system, reply in zip(systems, replies, strict=True):
            hypotheses.append(reply)
            references.append(refs)
            queries.append(query)
            system_of.append(system)
    return MetricBatch.of(hypotheses, references, queries=queries, systems=system_of)


DIALOG_SAMPLE = _dialog_sample()


def dailydialog_batch(*, limit: int | None = None) -> MetricBatch:
    """Consecutive turn pairs of DailyDialog's test set: the reply as the reference and, as the hypothesis, the
    turn at the same place in the next dialog (so another dialog's reply), raw text as nlg-eval reads it; one
    system, one context per pair. Skips, saying so, where ../shared/data is absent."""
    if not DAILYDIALOG_TEST.is_file():
        pytest.skip(f"real-data check skipped: {DAILYDIALOG_TEST} is not present")
    dialogs = []
    for line in DAILYDIALOG_TEST.read_text(encoding="utf-8").splitlines():
        turns = [turn.strip() for turn in line.split("__eou__")]
        turns = [turn for turn in turns if turn]
        if len(turns) >= 2:
            dialogs.append(turns)
    hypotheses: list[str] = []
    references: list[list[str]] = []
    queries: list[str] = []
    for index, turns in enumerate(dialogs):
        other = dialogs[(index + 1) % len(dialogs)]
        for position in range(1, len(turns)):
            references.append([turns[position]])
            hypotheses.append(other[min(position, len(other) - 1)])
            queries.append(f"dialog {index} turn {position}")
    end = len(hypotheses) if limit is None else limit
    return MetricBatch.of(hypotheses[:end], references[:end], queries=queries[:end])


def random_token_pairs(
    seed: int,
    count: int,
    vocabulary: Sequence[str],
    *,
    hypothesis_lengths: tuple[int, int] = (0, 14),
    reference_lengths: tuple[int, int] = (0, 14),
    references: tuple[int, int] = (1, 5),
) -> list[tuple[list[str], list[list[str]]]]:
    """Random token sequences over a small vocabulary, so that overlaps of every order (and none) occur."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        hypothesis = [rng.choice(vocabulary) for _ in range(rng.randint(*hypothesis_lengths))]
        refs = [
            [rng.choice(vocabulary) for _ in range(rng.randint(*reference_lengths))]
            for _ in range(rng.randint(*references))
        ]
        pairs.append((hypothesis, refs))
    return pairs
