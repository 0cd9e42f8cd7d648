"""A study's pairwise judgments as export rows (one plain dict per judgment, read in chunks), named the
way the other exports name things (annotation/selectors/exports.py): replies and contexts by external id
(the database id when there is none), annotators by pseudonym, times in ISO 8601 UTC.

``choice`` is canonical: ``a`` means the reply with the lower id (``response_a``) was judged better, ``b``
the other one, ``tie`` neither; ``winner`` spells it as the better system's name. ``shown_first`` says
which of the two the annotator saw on the left, so position bias can be checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from annotation.models import PairwiseJudgment, Study

CHUNK_SIZE = 2000


def _iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _external_or_id(external_id: str, pk: int) -> str:
    return external_id or str(pk)


def pairwise_rows(*, study: Study) -> Iterator[dict[str, Any]]:
    """One row per pairwise judgment of ``study``, in the order they were first given."""
    rows = (
        PairwiseJudgment.objects.filter(response_a__context__study=study)
        .order_by("pk")
        .values_list(
            "response_a__context__external_id",
            "response_a__context_id",
            "response_a__external_id",
            "response_a_id",
            "response_a__system__name",
            "response_b__external_id",
            "response_b_id",
            "response_b__system__name",
            "annotator__pseudonym",
            "choice",
            "shown_first_id",
            "seconds_spent",
            "client_seconds",
            "created_at",
        )
    )
    for (
        context_external,
        context_id,
        a_external,
        a_id,
        system_a,
        b_external,
        b_id,
        system_b,
        pseudonym,
        choice,
        shown_first,
        seconds,
        client_seconds,
        created_at,
    ) in rows.iterator(chunk_size=CHUNK_SIZE):
        yield {
            "study": study.name,
            "context": _external_or_id(context_external, context_id),
            "response_a": _external_or_id(a_external, a_id),
            "response_a_id": a_id,
            "system_a": system_a,
            "response_b": _external_or_id(b_external, b_id),
            "response_b_id": b_id,
            "system_b": system_b,
            "annotator": pseudonym,
            "choice": choice,
            "winner": {"a": system_a, "b": system_b}.get(choice, "tie"),
            "shown_first": "a" if shown_first == a_id else "b",
            "seconds": seconds,
            "client_seconds": client_seconds,
            "time": _iso_utc(created_at),
        }
