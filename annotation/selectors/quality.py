"""Quality control of a study's annotators: agreement with the others, attention checks, too-fast answers,
straight-lining, and which annotators' ratings count in reports.

Nothing here deletes or changes a rating: an annotator below the agreement threshold is *excluded from
reports* (``study_human_scores`` leaves their ratings out) and comes back as soon as the threshold is
lowered or the researcher overrides it (``Annotator.report_inclusion``).

Agreement (Gupta et al. (2019) section 5.1.1 drops raters with Cohen's kappa under 0.2): per question, each
annotator's ratings against the rounded mean of the other raters of the same replies, pooled over the
replies they share (:func:`stats.agreement.agreement_with_others`), quadratic weights on scales of
three or more points. The one number compared with the threshold is the mean of the annotator's
per-question kappas (the questions where a kappa could be computed); an annotator without one (too few
shared replies) is kept: there is no evidence against them yet.

Straight-lining ("always the same score"): on a question the annotator rated at least
``STRAIGHT_MIN_RATINGS`` times, one value makes up ``STRAIGHT_SHARE`` or more of their ratings. The
longest run of identical consecutive values is shown beside it for the researcher to judge, but does not
flag on its own: on a 0-2 scale, ten "good" replies in a row can be honest. Raters of unknown identity
(anonymous per-position imported scores, ``identity_known`` False) get no straight-lining figures: one
position holds different people's scores from reply to reply, so its uniformity describes nobody.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from annotation.models import Annotator, CheckAnswer, Question, Rating, Reference, ReferenceOrigin, Study
from stats.agreement import (
    AUTO,
    EXCLUDE,
    Weighting,
    agreement_with_others,
    is_included,
    weighting_for_scale,
)

STRAIGHT_MIN_RATINGS = 10
STRAIGHT_SHARE = 0.9


@dataclass(frozen=True)
class RatingRow:
    """One rating with what agreement and report filtering need (read in one query)."""

    annotator_id: int
    inclusion: str
    response_id: int
    question_id: int
    scale_min: int
    scale_max: int
    value: int
    seconds: float | None


def study_rating_rows(*, study: Study, question_ids: Iterable[int] | None = None) -> list[RatingRow]:
    """Every rating of the study's questions (or of ``question_ids``), oldest first (one query)."""
    queryset = Rating.objects.filter(question__study=study)
    if question_ids is not None:
        queryset = queryset.filter(question_id__in=list(question_ids))
    rows = queryset.order_by("id").values_list(
        "annotator_id",
        "annotator__report_inclusion",
        "response_id",
        "question_id",
        "question__scale_min",
        "question__scale_max",
        "value",
        "seconds_spent",
    )
    return [RatingRow(*row) for row in rows]


@dataclass(frozen=True)
class QuestionAgreement:
    question_id: int
    kappa: float | None
    items: int  # replies shared with at least one other rater
    weights: Weighting


def agreements_from_rows(rows: Sequence[RatingRow]) -> dict[int, dict[int, QuestionAgreement]]:
    """annotator id -> question id -> agreement with the other raters (no query).

    Values outside a question's scale (only possible through old imports) are left out, not fatal.
    """
    by_question: dict[int, dict[int, dict[int, int]]] = {}
    scales: dict[int, list[int]] = {}
    for row in rows:
        if not row.scale_min <= row.value <= row.scale_max:
            continue
        scales.setdefault(row.question_id, list(range(row.scale_min, row.scale_max + 1)))
        by_question.setdefault(row.question_id, {}).setdefault(row.annotator_id, {})[row.response_id] = (
            row.value
        )
    result: dict[int, dict[int, QuestionAgreement]] = {}
    for question_id, ratings in by_question.items():
        points = scales[question_id]
        weights = weighting_for_scale(points)
        for annotator_id, agreement in agreement_with_others(ratings, points=points, weights=weights).items():
            result.setdefault(annotator_id, {})[question_id] = QuestionAgreement(
                question_id=question_id, kappa=agreement.kappa, items=agreement.items, weights=weights
            )
    return result


def overall_agreement(agreements: Iterable[QuestionAgreement]) -> float | None:
    """The mean of the per-question kappas that could be computed; ``None`` when there is none."""
    kappas = [agreement.kappa for agreement in agreements if agreement.kappa is not None]
    return math.fsum(kappas) / len(kappas) if kappas else None


def excluded_from_rows(rows: Sequence[RatingRow], *, threshold: float | None) -> set[int]:
    """The annotators among ``rows`` whose ratings reports leave out (no query)."""
    inclusion = {row.annotator_id: row.inclusion for row in rows}
    needs_agreement = threshold is not None and AUTO in inclusion.values()
    agreements = agreements_from_rows(rows) if needs_agreement else {}
    return {
        annotator_id
        for annotator_id, choice in inclusion.items()
        if not is_included(choice, overall_agreement(agreements.get(annotator_id, {}).values()), threshold)
    }


def excluded_annotator_ids(*, study: Study) -> set[int]:
    """Annotators whose report_inclusion is "exclude", or "auto" with agreement under the study's
    ``kappa_threshold`` (a threshold of ``None`` auto-excludes nobody). Two queries."""
    excluded = excluded_from_rows(study_rating_rows(study=study), threshold=study.kappa_threshold)
    for pk, inclusion, identity_known in Annotator.objects.filter(study=study).values_list(
        "pk", "report_inclusion", "identity_known"
    ):
        if inclusion == EXCLUDE:
            excluded.add(pk)
        elif not identity_known:
            # Raters of unknown identity (anonymous per-position imported scores) have no agreement of
            # their own: only an explicit choice leaves them out, as in the report (report_human.py).
            excluded.discard(pk)
    return excluded


@dataclass(frozen=True)
class StraightLining:
    question_id: int
    ratings: int
    top_value: int
    top_share: float
    longest_run: int

    @property
    def flagged(self) -> bool:
        return self.ratings >= STRAIGHT_MIN_RATINGS and self.top_share >= STRAIGHT_SHARE


def straight_lining(question_id: int, values: Sequence[int]) -> StraightLining | None:
    """How uniform one annotator's ratings of one question are, in the order given (oldest first)."""
    if not values:
        return None
    top_value, top_count = Counter(values).most_common(1)[0]
    longest = run = 1
    for previous, current in itertools.pairwise(values):
        run = run + 1 if current == previous else 1
        longest = max(longest, run)
    return StraightLining(
        question_id=question_id,
        ratings=len(values),
        top_value=top_value,
        top_share=top_count / len(values),
        longest_run=longest,
    )


@dataclass(frozen=True)
class AnnotatorQuality:
    annotator_id: int
    pseudonym: str
    blocked: bool
    report_inclusion: str
    included: bool
    agreement: float | None
    agreements: dict[str, QuestionAgreement]  # question name -> agreement
    rated_replies: int
    checks_answered: int
    checks_failed: int
    checks_flagged: bool  # failed more checks than the study tolerates
    timed_answers: int  # ratings screens and check answers with a recorded time
    too_fast: int
    uniformity: dict[str, StraightLining]  # question name -> how uniform the ratings are
    references: int
    reference_flags: dict[str, int] = field(default_factory=dict)  # flag -> collected references with it
    identity_known: bool = True  # False: an anonymous imported rater, never judged as one person

    @property
    def checks_passed(self) -> int:
        return self.checks_answered - self.checks_failed

    @property
    def too_fast_share(self) -> float | None:
        return self.too_fast / self.timed_answers if self.timed_answers else None

    @property
    def straight_lined(self) -> bool:
        return any(entry.flagged for entry in self.uniformity.values())

    @property
    def most_uniform(self) -> StraightLining | None:
        """The question on which the annotator varied least (what the straight-lining column shows)."""
        entries = sorted(self.uniformity.values(), key=lambda entry: (-entry.flagged, -entry.top_share))
        return entries[0] if entries else None


def study_quality(*, study: Study) -> list[AnnotatorQuality]:
    """One row per annotator of the study, in joining order (five queries whatever the study's size)."""
    questions = {question.pk: question.name for question in Question.objects.filter(study=study)}
    annotators = list(Annotator.objects.filter(study=study).order_by("id"))
    rows = study_rating_rows(study=study)
    agreements = agreements_from_rows(rows)
    threshold = study.kappa_threshold
    minimum = study.min_seconds_per_item

    values: dict[int, dict[int, list[int]]] = {}
    screens: dict[int, dict[int, float | None]] = {}  # annotator -> reply -> seconds (one per screen)
    for row in rows:
        values.setdefault(row.annotator_id, {}).setdefault(row.question_id, []).append(row.value)
        screens.setdefault(row.annotator_id, {})[row.response_id] = row.seconds

    checks: dict[int, list[tuple[bool, float | None]]] = {}
    for annotator_id, passed, seconds in CheckAnswer.objects.filter(annotator__study=study).values_list(
        "annotator_id", "passed", "seconds_spent"
    ):
        checks.setdefault(annotator_id, []).append((passed, seconds))

    references: dict[int, list[list[str]]] = {}
    for author_id, flags in Reference.objects.filter(
        context__study=study, origin=ReferenceOrigin.COLLECTED, author__isnull=False
    ).values_list("author_id", "flags"):
        references.setdefault(author_id, []).append([str(flag) for flag in flags or []])

    result = []
    for annotator in annotators:
        # Raters of unknown identity have no agreement of their own (see excluded_annotator_ids).
        own = agreements.get(annotator.pk, {}) if annotator.identity_known else {}
        agreement = overall_agreement(own.values())
        answers = checks.get(annotator.pk, [])
        times = [seconds for seconds in screens.get(annotator.pk, {}).values() if seconds is not None]
        times += [seconds for _, seconds in answers if seconds is not None]
        failed = sum(1 for passed, _ in answers if not passed)
        # Nor straight-lining: an anonymous position's scores come from different people.
        uniformity = {
            questions.get(question_id, str(question_id)): entry
            for question_id, question_values in values.get(annotator.pk, {}).items()
            if annotator.identity_known
            and (entry := straight_lining(question_id, question_values)) is not None
        }
        written = references.get(annotator.pk, [])
        result.append(
            AnnotatorQuality(
                annotator_id=annotator.pk,
                pseudonym=annotator.pseudonym,
                blocked=annotator.blocked,
                report_inclusion=annotator.report_inclusion,
                included=is_included(annotator.report_inclusion, agreement, threshold),
                agreement=agreement,
                agreements={questions.get(qid, str(qid)): entry for qid, entry in own.items()},
                rated_replies=len(screens.get(annotator.pk, {})),
                checks_answered=len(answers),
                checks_failed=failed,
                checks_flagged=failed > study.check_failures_allowed,
                timed_answers=len(times),
                too_fast=sum(1 for seconds in times if seconds < minimum),
                uniformity=uniformity,
                references=len(written),
                reference_flags=dict(Counter(flag for flags in written for flag in flags)),
                identity_known=annotator.identity_known,
            )
        )
    return result
