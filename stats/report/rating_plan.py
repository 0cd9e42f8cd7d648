"""How many more ratings one question of a study needs (stats/meta/more_ratings.py), from its report inputs:
the ratings the report counts (its rater filter), each rated reply's system, context and metric values.

So that a page can say it in a few sentences, not every pair is projected: the systems side by side in the
order of their means (can each be told from the next?), every metric's correlation, and the two metrics
that correlate best with people (is the best really better than the runner-up?).
"""

from __future__ import annotations

import itertools

import numpy as np

from stats.centred import pearson
from stats.meta import Projection, RatingPlan, StudyRatings, rating_plan
from stats.report.document_types import MoreRatingsEntry
from stats.report.human import CountedRatings, counted_ratings
from stats.report.metric_names import study_display_names
from stats.report.metrics import metric_matrix
from stats.report.types import QuestionInputs, ReportInputs, ReportOptions

NO_RATINGS = "no ratings yet"


def question_rating_plan(
    inputs: ReportInputs,
    question: QuestionInputs,
    options: ReportOptions | None = None,
    counted: CountedRatings | None = None,
) -> RatingPlan:
    """``counted``: the question's ratings as the rater filter of ``options`` sorted them, when already known
    (the report's human side has them), else sorted here."""
    chosen = options or ReportOptions()
    if counted is None:
        counted = counted_ratings(
            question, inputs.annotators, chosen, chosen.threshold(inputs.study_threshold)
        )
    items: list[int] = []
    values: list[float] = []
    for rated in counted.kept_named.values():
        items.extend(rated.keys())
        values.extend(float(value) for value in rated.values())
    for response_id, extra in counted.kept_anonymous.items():
        items.extend([response_id] * len(extra))
        values.extend(float(value) for value in extra)
    replies = np.array(sorted(set(items)), dtype=np.int64)
    systems = [inputs.responses[int(reply)].system for reply in replies]
    contexts = [inputs.responses[int(reply)].context_key for reply in replies]
    matrix = metric_matrix(replies, list(inputs.signatures), inputs.metric_values)
    names = _metric_names(inputs)
    metrics = {
        name: matrix[:, column]
        for column, name in enumerate(names)
        if np.isfinite(matrix[:, column]).sum() >= 3
    }
    study = StudyRatings(items, values, replies.tolist(), systems, contexts, metrics)
    means = _reply_means(items, values, replies)
    return rating_plan(
        study,
        system_pairs=_neighbour_systems(systems, means),
        metric_pairs=_best_two_metrics(metrics, means),
    )


def more_ratings_entry(
    inputs: ReportInputs,
    question: QuestionInputs,
    options: ReportOptions | None = None,
    counted: CountedRatings | None = None,
) -> MoreRatingsEntry:
    """The plan of ``question`` in sentences, as the report and the annotation page show it (``counted``: as
    :func:`question_rating_plan` takes it)."""
    if not question.ratings:
        return _entry(question.name, NO_RATINGS, "", [], [], [])
    plan = question_rating_plan(inputs, question, options, counted)
    components = plan.components
    noise = (
        f"From {components.ratings} ratings of {components.items} replies: a reply's true score varies "
        f"with variance {components.item_variance:.2f} and one rating around it with "
        f"{components.noise_variance:.2f}."
        if components is not None
        else ""
    )
    return _entry(
        question.name,
        plan.note,
        noise,
        _sentences(plan.projections, "system mean"),
        _sentences(plan.projections, "system difference"),
        _sentences(plan.projections, "metric correlation")
        + _sentences(plan.projections, "metric difference"),
    )


def _entry(
    question: str, note: str, noise: str, systems: list[str], differences: list[str], metrics: list[str]
) -> MoreRatingsEntry:
    return {
        "question": question,
        "note": note,
        "noise": noise,
        "systems": systems,
        "differences": differences,
        "metrics": metrics,
    }


def _sentences(projections: tuple[Projection, ...], kind: str) -> list[str]:
    return [
        f"{projection.sentence[:1].upper()}{projection.sentence[1:]}."
        for projection in projections
        if projection.kind == kind
    ]


def _metric_names(inputs: ReportInputs) -> list[str]:
    """Each signature's display name, the report's (the signature itself where two shared a name)."""
    names = study_display_names(inputs)
    return [names[signature.text].text for signature in inputs.signatures]


def _reply_means(items: list[int], values: list[float], replies: np.ndarray) -> np.ndarray:
    codes = np.searchsorted(replies, np.asarray(items, dtype=np.int64))
    counts = np.bincount(codes, minlength=replies.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(codes, np.asarray(values, dtype=np.float64), replies.size) / counts


def _neighbour_systems(systems: list[str], means: np.ndarray) -> list[tuple[str, str]]:
    """Systems in the order of their mean human score, each with the next."""
    labels = np.asarray(systems, dtype=object)
    order = sorted(set(systems), key=lambda name: (-float(np.nanmean(means[labels == name])), name))
    return list(itertools.pairwise(order))


def _best_two_metrics(metrics: dict[str, np.ndarray], means: np.ndarray) -> list[tuple[str, str]]:
    """The two metrics with the highest Pearson r with the human means (none with fewer than two)."""
    scored = []
    for name, column in metrics.items():
        present = np.isfinite(column) & np.isfinite(means)
        if present.sum() >= 3 and np.ptp(column[present]) > 0 and np.ptp(means[present]) > 0:
            r = pearson(column[present], means[present])
            if r is not None:
                scored.append((-r, name))
    best = [name for _, name in sorted(scored)[:2]]
    return [(best[0], best[1])] if len(best) == 2 else []
