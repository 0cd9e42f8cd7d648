"""The shape of the report's plots object: the data behind the figures, beside the document
(``stats/report/document_types.py``) and served apart from it because it is larger (one value per reply and
metric). ``stats/report/builder.py`` writes it, ``stats/figures/`` draws it, the page's scripts and the
bundle's human scores read it; typed so that mypy, not a figure at run time, catches a renamed key.

Numbers that only a figure shows are rounded to six significant digits (``stats/figures/points.py``);
``human_exact`` keeps every digit for the bundle's inputs. A stored snapshot from an older version may
lack keys: readers use ``.get``.
"""

from __future__ import annotations

from typing import TypedDict, cast


class ScatterItems(TypedDict):
    """The question's replies with a human score, in ascending id order: each list one entry per reply."""

    id: list[int]
    text: list[str]  # cut to the hover limit; escaped for plotly by stats/figures/report.py's reply_texts
    system: list[int]  # index into QuestionPlots.systems
    human: list[float]
    human_exact: list[float]
    x: list[float]  # the human score with the figures' jitter (Tao et al., 2018, Figures 4-5)


class ScatterMetric(TypedDict):
    """One metric signature's values over ``ScatterItems`` (None: no value for that reply)."""

    signature: str
    metric: str
    references: str
    pearson: float | None
    spearman: float | None
    values: list[float | None]


class MetricPlots(TypedDict):
    """What the metric side of a question adds (stats/report/metrics.py)."""

    question: str
    systems: list[str]
    items: ScatterItems
    metrics: list[ScatterMetric]


class RaterPoints(TypedDict):
    """One rater's ratings of the agreement heat map (the most active raters), by reply id."""

    annotator: str
    included: bool
    items: list[int]
    values: list[float]


class KappaHeatmap(TypedDict):
    """Weighted Cohen's kappa between raters (None: not computable) and the replies each pair shares."""

    raters: list[str]
    kappa: list[list[float | None]]
    shared: list[list[int]]


class RaterVsRestPoints(TypedDict):
    """Tao et al. (2018), Figure 4(a): the median-correlated rater against the mean of the others."""

    annotator: str
    pearson: float | None
    spearman: float | None
    items: list[int]
    x: list[float]  # jittered
    y: list[float]  # jittered
    rest: list[float]
    own: list[float]


class HalvesPoints(TypedDict):
    """Tao et al. (2018), Figure 4(b): one random half of the raters against the other."""

    first: list[str]
    second: list[str]
    pearson: float | None
    spearman: float | None
    items: list[int]
    x: list[float]
    y: list[float]
    caveat: str


class AgreementPlots(TypedDict):
    """The raters' points and their agreement heat map (stats/report/human.py's agreement section)."""

    raters: list[RaterPoints]
    heatmap: KappaHeatmap | None  # None below two raters


class FigureFourPlots(TypedDict):
    figure_4a: RaterVsRestPoints | None
    figure_4b: HalvesPoints | None


class HumanPlots(AgreementPlots, FigureFourPlots):
    """What the human side of a question adds (stats/report/human.py)."""


class QuestionPlots(MetricPlots, HumanPlots):
    """One question's plots: its metric side and its human side."""


class ReportPlots(TypedDict):
    questions: dict[str, QuestionPlots]  # question name -> its plots


def report_plots_from_json(value: object) -> ReportPlots:
    """The plots read back from JSON (a stored snapshot's ``plots``): the one place where stored JSON
    becomes :class:`ReportPlots`, as ``report_document_from_json`` for the document. A snapshot without
    plots (none stored) reads as a report without any question's plots."""
    if value is None:
        return {"questions": {}}
    if not isinstance(value, dict):
        raise ValueError(f"a report's plots are a JSON object, not {type(value).__name__} ({value!r:.80})")
    return cast(ReportPlots, value)


def question_plots(plots: ReportPlots, question: str) -> QuestionPlots:
    """The question's plots; a question without any (an older snapshot) reads as one where every key is
    missing, so that each reader's ``.get`` finds nothing (and a figure is left out)."""
    return (plots.get("questions") or {}).get(question) or cast(QuestionPlots, {})
