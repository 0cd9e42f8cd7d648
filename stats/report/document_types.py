"""The report document's shape, section by section, as TypedDicts: exactly the JSON that
stats/report/builder.py produces, so that mypy checks every key from the builder to its readers (the
figures, the LaTeX tables, the CSV exports, the bundle, the API and the page).

TypedDicts, not dataclasses: the document stays the plain dict it is in the database, in the cache, in the
API and in ``study_report --format json``, byte for byte. A key marked ``NotRequired`` is there only
sometimes (the docstring of its class says when). Documents read back from JSON (a stored snapshot) become
a :class:`ReportDocument` once, at the boundary: :func:`stats.report.document.report_document_from_json`.

A new section: a TypedDict of its entries here (one per section, named after it), a key in
:class:`ReportDocument`, its builder in a module of its own under stats/report/ (as pairwise.py), and
docs/report.md. The ``pairwise`` section's TypedDicts are in stats/report/pairwise_types.py (its judges made
this module too long), read from here. Fields are added, never renamed (``DOCUMENT_VERSION`` in builder.py).

Pure Python: no Django here (import-linter contract).
"""

# No ``from __future__ import annotations`` here: NotRequired must be seen when each class is created, so
# that ``__required_keys__`` is right at run time too (tests/stats/test_document_types.py reads it).
from typing import Literal, NotRequired, TypedDict

from stats.report.pairwise_types import PairwiseMetricAgreement as PairwiseMetricAgreement
from stats.report.pairwise_types import PairwiseSection as PairwiseSection

# -- shared pieces ------------------------------------------------------------------------------------

Interval = list[float | None]  # [low, high]; [None, None] when not computable
Statistic = Literal["pearson", "spearman", "kendall"]


class ReportOptionsFields(TypedDict):
    """The researcher's choices (stats.report.types.ReportOptions)."""

    filter: str
    normalise: str
    resamples: int
    seed: int
    grouping: NotRequired[str]  # none, context or system; documents from before it lack it: none


class SignatureFields(TypedDict):
    """Which metric a row is about; ``signature`` is the full text that makes its scores reproducible."""

    metric: str  # an external metric's is "<name> (external)"
    references: str  # "single", "multi", or "none"
    signature: str
    group: str  # Referenced, Unreferenced, Hybrid, Other, External
    origin: str  # builtin, plugin, external
    implementation: str  # the tool that computed the scores (nltk, sacrebleu, ...)
    # the metric's name as every page, figure and export shows it, unique in the document
    # (stats/display_names.py; the legend is ``metric_names``); documents before version 4 lack it
    display: NotRequired[str]


class CorrelationFields(TypedDict):
    """Each coefficient with its p-value and 95% Fisher-z interval (``None``: not computable, see note)."""

    pearson: float | None
    pearson_p: float | None
    pearson_ci: Interval
    spearman: float | None
    spearman_p: float | None
    spearman_ci: Interval
    kendall: float | None  # Kendall's tau-b
    kendall_p: float | None
    kendall_ci: Interval


class MetricLeftOut(TypedDict):
    no_metric_score: int  # replies with a human score and no value of the metric


class MetricStatistics(CorrelationFields):
    """A metric against the human scores over ``n`` replies, with bootstrap intervals."""

    n: int
    pearson_ci_bootstrap: Interval
    spearman_ci_bootstrap: Interval
    spearman_bootstrap: str | None  # how the bootstrap ranked (stats.bootstrap), None without resamples
    left_out: MetricLeftOut
    note: str


# -- questions, filter, human rows, agreement (stats/report/human.py) ----------------------------------


class QuestionLeftOut(TypedDict):
    """Replies of the question without a human score, and why."""

    no_human_score: int
    excluded_by_researcher: NotRequired[int]  # only when the researcher excluded replies


class QuestionSummary(TypedDict):
    """``questions``: one entry per question (tagged by ``name``, not ``question``)."""

    name: str
    scale: list[int]  # [min, max]
    responses: int  # every reply of the study, the excluded ones too
    human_scored: int
    ratings: int
    imported_means: int
    gold_values: int  # replies with an adjudicated gold value
    left_out: QuestionLeftOut


class RemovedAnnotator(TypedDict):
    annotator: str  # pseudonym
    ratings: int
    agreement: float | None
    reason: str


class FilterEntry(TypedDict):
    """``filter``: which rater filter a question's human scores used and what it removed."""

    question: str
    kind: str  # "study", "none" or a threshold written as a number
    threshold: float | None
    description: str
    annotators_removed: int
    ratings_removed: int
    ratings_total: int
    removed: list[RemovedAnnotator]
    normalisation: str
    normalisation_note: str


class HumanEntry(TypedDict):
    """``human``: the Human (Avg) and Human (Max) rows of a question (Tao et al., 2018, Table 2)."""

    question: str
    label: str  # "Human (Avg)" or "Human (Max)"
    pearson: float | None
    pearson_p: float | None
    spearman: float | None
    spearman_p: float | None
    raters: int
    pearson_rater: str | None  # Human (Max): whose coefficient it is
    spearman_rater: str | None
    note: str


class CoefficientEntry(TypedDict):
    """An agreement coefficient (stats.agreement_coefficients.Coefficient): ``value`` or ``None`` with the
    reason in ``note``, and the details only some coefficients carry."""

    value: float | None
    items: int
    ratings: int
    note: str
    # Fleiss' kappa
    raters_per_item: NotRequired[int]
    items_left_out: NotRequired[int]
    # the ICC
    type: NotRequired[str]
    model: NotRequired[str]
    raters: NotRequired[int]
    ci95: NotRequired[Interval]
    p: NotRequired[float | None]
    average_type: NotRequired[str]
    average_value: NotRequired[float | None]
    # the mean of the pairs' Cohen's kappas
    pairs: NotRequired[int]
    pairs_left_out: NotRequired[int]
    weights: NotRequired[str]
    raters_left_out: NotRequired[int]  # raters beyond the most active ones (stats/report/human.py)


class AnnotatorAgreement(TypedDict):
    """One named rater of a question: ratings, whether they count, agreement, alpha without them."""

    annotator: str
    ratings: int
    included: bool
    agreement_kappa: float | None
    pair_kappa_mean: float | None
    alpha_without: float | None
    alpha_change_without: float | None
    pearson_vs_rest: float | None
    pearson_vs_rest_p: float | None
    spearman_vs_rest: float | None
    spearman_vs_rest_p: float | None
    shared_replies: int


class RaterPairKappa(TypedDict):
    first: str
    second: str
    kappa: float | None
    items: int
    note: str


AgreementCoefficient = Literal[  # the coefficients of an AgreementEntry, in the document's order
    "krippendorff_alpha_ordinal",
    "krippendorff_alpha_interval",
    "krippendorff_alpha_ordinal_before_filter",
    "fleiss_kappa",
    "icc",
    "cohen_kappa_mean",
]


class AgreementEntry(TypedDict):
    """``agreement``: how much the raters of a question agree."""

    question: str
    scale: list[int]
    identity: str  # "known", "anonymous", "mixed", or "none" (no ratings)
    note: str
    krippendorff_alpha_ordinal: CoefficientEntry
    krippendorff_alpha_interval: CoefficientEntry
    krippendorff_alpha_ordinal_before_filter: CoefficientEntry
    fleiss_kappa: CoefficientEntry
    icc: CoefficientEntry
    cohen_kappa_mean: CoefficientEntry
    annotators: list[AnnotatorAgreement]
    pairs: list[RaterPairKappa]


# -- the metrics (stats/report/metrics.py) --------------------------------------------------------------


class GroupedCorrelationFields(TypedDict):
    """A metric's grouped correlation (stats/report/meta.py, stats.meta.grouped_correlations): within each
    context's (or system's) replies, averaged over the groups with 2 or more replies whose human and metric
    scores both vary; intervals: the percentile bootstrap over groups. ``None`` values: ``note`` says why."""

    grouping: str  # "context" or "system"
    pearson: float | None
    pearson_ci: Interval
    spearman: float | None
    spearman_ci: Interval
    kendall: float | None  # Kendall's tau-b
    kendall_ci: Interval
    groups: int  # groups averaged over
    groups_total: int  # every group of the grouping among the replies with a human score
    left_out: dict[str, int]  # groups not used, by reason (fewer than 2 replies, constant scores)
    note: str


class JudgeFields(TypedDict):
    """What an LLM judge (``llm-judge:<key>``, stats/report/judges.py) asked and how well its model fitted:
    ``judge`` of its legend entry and of its rows; documents before version 5 lack it. ``label_mass``: the
    mean, over the study's replies it judged, of the next-token probability its model put on the scale's
    labels (its ``llm-judge-mass`` companion, which is no metric of the report); ``None`` without one."""

    template: str  # the prompt template's name (its hash is in the signature)
    model: str  # the local model's name or the endpoint's model id
    question: str  # the question of the study it asked
    read: str  # expectation (G-EVAL's probability-weighted mean) or argmax
    label_mass: float | None
    label_mass_replies: int  # replies with a mass
    note: (
        str  # below a mean mass of 0.5, the sentence that says the prompt or the model does not fit; else ""
    )


class JudgeRowFields(JudgeFields):
    """A judge's row: ``own_question`` when the row's question is the one the judge asked (a judge of another
    question correlates as any metric)."""

    own_question: bool


class MetricRow(SignatureFields, MetricStatistics):
    """``rows``: a metric against the human scores of a question, over every reply."""

    question: str
    no_values: NotRequired[str]  # only for a metric with no value for any reply: why
    judge: NotRequired[JudgeRowFields]  # only for an LLM judge
    # the meta-evaluation (stats/report/meta.py); documents from before it lack them. ``grouped``: only when
    # the report's grouping is not none. ``rank``: the metric's significance cluster (1 = best; None: no
    # statistic or no permutations), as ``significance_clusters`` describes.
    grouped: NotRequired[GroupedCorrelationFields]
    rank: NotRequired[int | None]


class PerSystemRow(SignatureFields, MetricStatistics):
    """``per_system``: a metric against the human scores over one system's replies."""

    question: str
    system: str
    grouped: NotRequired[GroupedCorrelationFields]  # as in MetricRow, over the system's replies


class ComparisonTests(TypedDict):
    """Williams' test and the paired bootstrap of two metrics' correlations with the human score."""

    pearson_difference: float | None  # first's Pearson r minus second's
    williams_t: float | None
    williams_p: float | None
    bootstrap_p: float | None
    spearman_difference: float | None
    williams_p_spearman: float | None
    bootstrap_p_spearman: float | None
    metrics_pearson: float | None  # the two metrics against each other
    winner: str | None  # the signature better by both tests (p < 0.05)
    note: str


class MetricComparison(ComparisonTests):
    """``metric_comparisons``: one pair of metric signatures of a question. With the meta-evaluation, also
    Deutsch et al. (2021)'s permutation tests of the two metrics' statistic (stats.meta.permutation_tests):
    two-sided p-values, ``None`` where not run (``permutation_note`` says why)."""

    question: str
    first: str  # signature
    first_metric: str
    second: str
    second_metric: str
    first_display: NotRequired[str]  # the two metrics' display names
    second_display: NotRequired[str]
    n: int
    permutation_statistic: NotRequired[str]  # e.g. "Pearson, grouped by context"
    # the permutation_statistic of each metric that the two permutation tests compared (on the replies both
    # metrics scored; None where the tests were not run)
    first_statistic: NotRequired[float | None]
    second_statistic: NotRequired[float | None]
    perm_both_p: NotRequired[float | None]  # PERM-BOTH: each reply's two scores swapped independently
    perm_both_permutations: NotRequired[int]  # run (early stopping as the WMT metrics task)
    perm_inputs_p: NotRequired[float | None]  # PERM-INPUTS: every reply of a context swapped together
    perm_inputs_permutations: NotRequired[int]
    permutation_note: NotRequired[str]


class SystemMeans(TypedDict):
    system: str
    human_mean: float
    metric_mean: float
    n: int  # replies both means run over


class SystemLevelRow(SignatureFields, CorrelationFields):
    """``system_level``: the systems' mean metric values against their mean human scores (Gupta et al., 2019,
    Figure 1); ``n`` counts systems."""

    question: str
    n: int
    note: str
    systems: list[SystemMeans]


class QuantileGroupEntry(TypedDict):
    """One fifth of the replies, by human score (stats.curves.QuantileGroup)."""

    human_low: float
    human_high: float
    human_mean: float
    metric_mean: float
    items: int


class QuantileEntry(TypedDict):
    """``quantiles``: Tao et al. (2018) Figure 1's data for one signature."""

    question: str
    signature: str
    metric: str
    groups: list[QuantileGroupEntry]
    display: NotRequired[str]


# -- meta-evaluation (stats/report/meta.py) -------------------------------------------------


class SignificanceClusterEntry(TypedDict):
    """``significance_clusters``: how a question's metric rows got their ``rank``, as the WMT metrics task
    ranks metrics (stats.meta.significance_clusters): ordered by ``statistic``, a new cluster starts where a
    metric is significantly worse (one-sided ``test``) than a metric of the current cluster, by ``rule``
    ("any": any metric of the cluster, p <= ``alpha``, mt-metrics-eval's AssignRanks; "best": its best, p <
    ``alpha``), which ``rule_description`` says in words. Documents before version 3 ranked by "best"."""

    question: str
    statistic: str
    test: str
    permutations: int
    alpha: float
    rule: NotRequired[str]
    rule_description: NotRequired[str]
    order: list[str]  # signatures, best first (those with a rank)
    order_display: NotRequired[list[str]]  # their display names
    note: str


class TieCountsEntry(TypedDict):
    """Pairs by outcome at the accuracy's epsilon (Deutsch et al. 2023, Table 1)."""

    concordant: int
    discordant: int
    ties_human: int
    ties_metric: int
    ties_both: int


class AccuracyFields(TypedDict):
    """One pairwise accuracy (stats.meta.PairwiseAccuracy): ``value`` is acc_eq at ``epsilon`` (the tie
    threshold; 0 and not calibrated: Kocmi et al.'s accuracy); ``ci`` the bootstrap over contexts
    (``ci_method`` says how); ``None`` values: ``note`` says why."""

    value: float | None
    epsilon: float | None
    calibrated: bool
    accuracy_at_zero: float | None
    pairs: int
    groups: int  # contexts averaged over (1 at system level)
    systems: int  # systems compared (system level)
    counts: TieCountsEntry | None
    ci: Interval
    ci_method: str
    note: str
    # within contexts only (benchmark significance): acc_eq of the better trivial metric, tie
    # everything or order at random (stats.meta.trivial_accuracy); documents from before it lack it
    trivial: NotRequired[float | None]


class PairwiseAccuracyEntry(SignatureFields):
    """``pairwise_accuracy``: a metric's pairwise accuracy of a question, at system level (Kocmi et al. 2021)
    and within contexts (acc_eq with tie calibration, Deutsch, Foster and Freitag 2023)."""

    question: str
    system: AccuracyFields
    context: AccuracyFields


class MoreRatingsEntry(TypedDict):
    """``more_ratings``: how many more ratings a question needs (stats/report/rating_plan.py), in sentences."""

    question: str
    note: str  # why there is no estimate ("" when there is one)
    noise: str  # the variance components in a sentence ("" when unknown)
    systems: list[str]  # each system's mean
    differences: list[str]  # each system beside the next in the order of their means
    metrics: list[str]  # each metric's correlation, and the best two metrics


# -- references, diversity (stats/report/builder.py) ---------------------------------------------------


class ReferencePointEntry(TypedDict):
    """The correlation with k references (stats.curves.ReferenceCountPoint)."""

    references: int
    pearson_mean: float | None
    pearson_sd: float | None
    spearman_mean: float | None
    spearman_sd: float | None
    items: int


class ReferencesCurveEntry(TypedDict):
    """``references_curve``: Gupta et al. (2019) Figure 2 for one multi-reference signature."""

    question: str
    signature: str
    metric: str
    display: NotRequired[str]
    items: int
    max_references: int
    stored_multi_pearson: float | None
    points: list[ReferencePointEntry]


class SingleVsMultiEntry(TypedDict):
    """``single_vs_multi``: Gupta et al. (2019) Table 4, one metric with one reference and with all of them."""

    question: str
    metric: str
    display: NotRequired[str]  # the row's name: the single signature's display name without "single"
    single_signature: str
    single_display: NotRequired[str]
    single_n: int
    single_spearman: float | None
    single_spearman_p: float | None
    single_pearson: float | None
    single_pearson_p: float | None
    multi_signature: str
    multi_display: NotRequired[str]
    multi_n: int
    multi_spearman: float | None
    multi_spearman_p: float | None
    multi_pearson: float | None
    multi_pearson_p: float | None


class DiversityRow(TypedDict):
    metric: str
    inverted: bool  # correlated as 1 - value (Self-BLEU)
    n: int
    spearman: float | None
    spearman_p: float | None
    pearson: float | None
    pearson_p: float | None
    note: str


class DiversitySection(TypedDict):
    """``diversity``: Gupta et al. (2019) Table 5 (``None`` in the document without diversity judgments)."""

    pairs: int  # (system, context) pairs
    judgments: int
    human_score: str
    rows: list[DiversityRow]


# -- the document ----------------------------------------------------------------------------------------


class MetricNameEntry(TypedDict):
    """``metric_names``: the legend of the display names: every signature the document shows, its
    metric's name, the parts of its signature that tell it apart (``detail``, "" when none need to), and the
    display name they make."""

    signature: str
    metric: str  # an LLM judge's without its key: llm-judge
    detail: str
    display: str
    judge: NotRequired[JudgeFields]  # only for an LLM judge


class ReportDocument(TypedDict):
    """The whole report of a study (docs/report.md describes every section). The lists hold every
    question's entries, each tagged with its question."""

    document_version: int
    study: int
    study_name: str
    data_version: int
    code_version: str
    options: ReportOptionsFields
    questions: list[QuestionSummary]
    filter: list[FilterEntry]
    human: list[HumanEntry]
    agreement: list[AgreementEntry]
    rows: list[MetricRow]
    per_system: list[PerSystemRow]
    metric_comparisons: list[MetricComparison]
    system_level: list[SystemLevelRow]
    quantiles: list[QuantileEntry]
    references_curve: list[ReferencesCurveEntry]
    single_vs_multi: list[SingleVsMultiEntry]
    diversity: DiversitySection | None
    pairwise: PairwiseSection | None
    notes: list[str]
    # the meta-evaluation (stats/report/meta.py); documents from before it lack them
    pairwise_accuracy: NotRequired[list[PairwiseAccuracyEntry]]
    significance_clusters: NotRequired[list[SignificanceClusterEntry]]
    more_ratings: NotRequired[list[MoreRatingsEntry]]
    metric_names: NotRequired[list[MetricNameEntry]]  # documents before version 4 lack it


class QuestionDocument(ReportDocument):
    """The document as the API and ``study_report`` give it (stats.report.document.document_for_question):
    ``question`` names the question its sections are limited to, ``None`` for all of them."""

    question: str | None
