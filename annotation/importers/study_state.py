"""What the planner needs to know about a study, as plain data (the import service loads it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class QuestionInfo:
    pk: int
    name: str
    scale_min: int
    scale_max: int

    @property
    def scale(self) -> str:
        return f"{self.scale_min}-{self.scale_max}"


@dataclass(frozen=True)
class ExistingContext:
    pk: int
    turns: list[dict[str, Any]]


@dataclass
class StudyState:
    """The study's rows an import can reuse or collide with (all keyed the way the planner looks them up)."""

    questions: list[QuestionInfo] = field(default_factory=list)
    contexts_by_external_id: dict[str, ExistingContext] = field(default_factory=dict)
    # Contexts imported without an id, by pk: a contexts download names them "context-<pk>" (context_ids.py).
    contexts_without_id: dict[int, ExistingContext] = field(default_factory=dict)
    contexts_by_text_key: dict[str, int] = field(default_factory=dict)
    next_context_position: int = 0
    reference_texts: dict[int, set[str]] = field(default_factory=dict)  # context pk -> texts
    systems: dict[str, int] = field(default_factory=dict)  # name -> pk
    annotators: dict[str, tuple[int, str]] = field(default_factory=dict)  # pseudonym -> (pk, origin)
    responses: set[tuple[int, int, int]] = field(default_factory=set)  # (system, context, sample_index)
