"""Which references a reply is scored against, by the run's references mode (Gupta et al., 2019, sections 3.1-3.2).

- "single": one reference per context, the corpus's original reply (origin "original"); the first
  reference (lowest id) when a context has no original one.
- "multi": every reference of the context, in id order (referenced metrics take the best match, eq. 1).

A context without any reference gives an empty list in both modes: reference-based metrics skip its replies
and the run's notes count them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from annotation.models import ReferenceOrigin
from scoring.models import ReferencesMode


class ReferenceLike(Protocol):
    """A reference as a model instance or a plain row: its id, text and origin."""

    @property
    def pk(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def origin(self) -> str: ...


def references_for_mode(references: Iterable[ReferenceLike], mode: str) -> list[str]:
    """The texts scored against, from a context's references (any order; sorted by id here)."""
    ordered = sorted(references, key=lambda reference: reference.pk)
    if mode == ReferencesMode.MULTI:
        return [reference.text for reference in ordered]
    if mode != ReferencesMode.SINGLE:
        raise ValueError(f"unknown references mode {mode!r}")
    originals = [reference.text for reference in ordered if reference.origin == ReferenceOrigin.ORIGINAL]
    if originals:
        return originals[:1]
    return [ordered[0].text] if ordered else []
