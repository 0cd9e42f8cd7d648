"""The items a metric scores, as one value: what every compute function of a spec receives.

A spec's compute reads only the fields it uses (BLEU the replies and references, RUBER's unreferenced
score the replies and queries, MaUde every context turn), instead of a fixed argument list of which most
metrics used half. Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MetricInputs:
    """The items a call scores: ``hypotheses[i]`` the reply, ``references[i]`` its references (empty when it
    has none), ``queries[i]`` the last context turn, ``contexts[i]`` every turn oldest first (None: the
    one-turn context ``[queries[i]]``), all in ``language``."""

    hypotheses: Sequence[str]
    references: Sequence[Sequence[str]]
    queries: Sequence[str]
    language: str
    contexts: Sequence[Sequence[str]] | None = None

    def __len__(self) -> int:
        return len(self.hypotheses)

    def check(self) -> None:
        """A ValueError when the sequences do not describe the same items."""
        if not len(self.hypotheses) == len(self.references) == len(self.queries):
            raise ValueError(
                f"hypotheses, references and queries differ in length: "
                f"{len(self.hypotheses)}, {len(self.references)}, {len(self.queries)}"
            )
        if self.contexts is not None and len(self.contexts) != len(self.hypotheses):
            raise ValueError(f"{len(self.contexts)} contexts for {len(self.hypotheses)} hypotheses")

    @property
    def context_turns(self) -> Sequence[Sequence[str]]:
        """What a context-aware metric reads: every turn, or the one-turn context of each item (what a
        caller without every turn gives it)."""
        return self.contexts if self.contexts is not None else [[query] for query in self.queries]

    def slice(self, start: int, end: int) -> MetricInputs:
        return MetricInputs(
            self.hypotheses[start:end],
            self.references[start:end],
            self.queries[start:end],
            self.language,
            None if self.contexts is None else self.contexts[start:end],
        )
