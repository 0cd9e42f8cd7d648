"""The researcher's adjudication of one reply: leave it out of every report, and/or give it a
gold value per question, with a note. Nothing is deleted: ratings, notes and scores stay, and undoing is
clearing the decision.

How the reports use it (stats/report/adjudication.py): an excluded reply is left out of every
report and counted among the replies left out ("excluded by the researcher"); a gold value replaces the
mean human score of that reply for that question. Every change that can move a report bumps the study's
data version (kernel/data_version.py), so cached reports are recomputed.

A gold value is a number within the question's scale (decimals allowed: it stands in for a mean of
ratings); it is stored as an integer when it is one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import Adjudication, Question, Response
from kernel.data_version import study_data_changed

MAX_NOTE_CHARACTERS = 2000


class AdjudicationInvalid(Exception):
    """A decision that cannot be stored; ``field`` names the input at fault (``gold.<question>``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def gold_values(*, questions: list[Question], raw: Mapping[str, object]) -> dict[str, int | float]:
    """question name -> gold value, from raw input (numbers or text; empty means no gold value)."""
    by_name = {question.name: question for question in questions}
    unknown = sorted(set(raw) - set(by_name))
    if unknown:
        raise AdjudicationInvalid(f"gold.{unknown[0]}", "this study asks no such question")
    gold: dict[str, int | float] = {}
    for name, value in raw.items():
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        question = by_name[name]
        field = f"gold.{name}"
        if isinstance(value, bool):
            raise AdjudicationInvalid(field, f"{value!r} is not a number")
        try:
            number = float(str(value).strip())
        except ValueError:
            raise AdjudicationInvalid(field, f"{value!r} is not a number") from None
        if not math.isfinite(number):
            raise AdjudicationInvalid(field, f"{value!r} is not a number")
        if not question.scale_min <= number <= question.scale_max:
            raise AdjudicationInvalid(
                field,
                f"{number:g} is outside the scale {question.scale_min}-{question.scale_max} of {name}",
            )
        gold[name] = int(number) if number.is_integer() else number
    return gold


def _questions(response: Response) -> list[Question]:
    return list(Question.objects.filter(study_id=response.context.study_id).order_by("position", "id"))


def _save(
    response: Response, *, excluded: bool, gold: dict[str, int | float], note: str, decided_by: User | None
) -> Adjudication:
    current = Adjudication.objects.select_for_update().filter(response=response).first()
    moves_reports = current is None and (excluded or gold)
    if current is not None:
        moves_reports = current.excluded != excluded or current.gold != gold
    adjudication, _ = Adjudication.objects.update_or_create(
        response=response,
        defaults={"excluded": excluded, "gold": gold, "note": note, "decided_by": decided_by},
    )
    if moves_reports:
        study_data_changed(study_id=response.context.study_id)
    return adjudication


@transaction.atomic
def adjudication_set(
    *,
    response: Response,
    excluded: bool,
    gold: Mapping[str, object],
    note: str = "",
    decided_by: User | None = None,
) -> Adjudication:
    """The whole decision on ``response`` (replaces the earlier one): every field is checked first, so bad
    input raises :class:`AdjudicationInvalid` and changes nothing."""
    checked = gold_values(questions=_questions(response), raw=gold)
    note = (note or "").replace("\r\n", "\n").strip()
    if len(note) > MAX_NOTE_CHARACTERS:
        raise AdjudicationInvalid(
            "note", f"at most {MAX_NOTE_CHARACTERS} characters (this one has {len(note)})"
        )
    return _save(response, excluded=bool(excluded), gold=checked, note=note, decided_by=decided_by)


@transaction.atomic
def adjudication_exclude(
    *, response: Response, excluded: bool, decided_by: User | None = None
) -> Adjudication:
    """Leave ``response`` out of every report (or take it back), keeping its gold values and note."""
    current = Adjudication.objects.filter(response=response).first()
    return _save(
        response,
        excluded=bool(excluded),
        gold=dict(current.gold) if current else {},
        note=current.note if current else "",
        decided_by=decided_by,
    )


@transaction.atomic
def adjudication_clear(*, response: Response, decided_by: User | None = None) -> Adjudication | None:
    """Undo: the reply counts again like any other (not excluded, no gold value, no note). The row is kept
    with its fields cleared (who cleared it and when); None when there was no decision to undo."""
    if not Adjudication.objects.filter(response=response).exists():
        return None
    return _save(response, excluded=False, gold={}, note="", decided_by=decided_by)


__all__ = [
    "AdjudicationInvalid",
    "adjudication_clear",
    "adjudication_exclude",
    "adjudication_set",
    "gold_values",
]
