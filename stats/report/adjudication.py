"""The researcher's adjudication of replies, applied to a report's inputs.

* An excluded reply is left out of every part of the report: its ratings, its imported mean, its metric
  values and its per-reference scores are dropped before anything is computed, and the report counts it
  among the replies left out, with the reason "excluded by the researcher". Nothing is deleted: undoing
  the exclusion brings everything back at the next computation.
* A gold value replaces the human score of that reply for that question (the mean of the ratings that
  count, or an imported mean); the report says how many replies of each question have one. The ratings
  themselves stay as they are, so agreement statistics still describe the raters.

Pure Python: no Django here (import-linter contract); correlation/report/loading.py reads the decisions
from the database (annotation.models.Adjudication) and calls :func:`adjudicated`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from stats.report.types import QuestionInputs, ReferenceScores, ReportInputs


@dataclass(frozen=True)
class Adjudications:
    """The study's decisions: excluded reply ids, and question name -> reply id -> gold value."""

    excluded: frozenset[int] = frozenset()
    gold: Mapping[str, Mapping[int, float]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.excluded) or any(self.gold.values())


def adjudications_from_rows(rows: list[tuple[int, bool, Mapping[str, object]]]) -> Adjudications:
    """From (response id, excluded, gold) rows as stored; gold values that are not finite numbers are
    ignored (the service never stores one)."""
    excluded = frozenset(response_id for response_id, is_excluded, _ in rows if is_excluded)
    gold: dict[str, dict[int, float]] = {}
    for response_id, _, values in rows:
        for name, value in (values or {}).items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                continue
            gold.setdefault(str(name), {})[response_id] = float(value)
    return Adjudications(excluded=excluded, gold=gold)


def adjudicated(inputs: ReportInputs, adjudications: Adjudications) -> ReportInputs:
    """``inputs`` without the excluded replies, with the gold values on their questions."""
    if not adjudications:
        return inputs
    excluded = frozenset(adjudications.excluded & set(inputs.responses))

    def kept(values: Mapping[int, float]) -> dict[int, float]:
        return {response_id: value for response_id, value in values.items() if response_id not in excluded}

    responses = {key: value for key, value in inputs.responses.items() if key not in excluded}
    questions = tuple(
        replace(
            question,
            ratings=tuple(rating for rating in question.ratings if rating[1] not in excluded),
            imported_means=kept(question.imported_means),
            gold=_gold(question, adjudications.gold.get(question.name, {}), responses),
        )
        for question in inputs.questions
    )
    return replace(
        inputs,
        responses=responses,
        questions=questions,
        metric_values={signature: kept(values) for signature, values in inputs.metric_values.items()},
        reference_scores=tuple(
            ReferenceScores(
                signature_id=entry.signature_id,
                scores={key: value for key, value in entry.scores.items() if key not in excluded},
                width=entry.width,
            )
            for entry in inputs.reference_scores
        ),
        excluded_responses=excluded | inputs.excluded_responses,
    )


def _gold(
    question: QuestionInputs, values: Mapping[int, float], responses: Mapping[int, object]
) -> dict[int, float]:
    """The gold values of replies still in the report, within the question's scale (the service checks
    this when they are set; a scale changed since then leaves an out-of-range value unused)."""
    return {
        response_id: float(value)
        for response_id, value in values.items()
        if response_id in responses and question.scale_min <= value <= question.scale_max
    }
