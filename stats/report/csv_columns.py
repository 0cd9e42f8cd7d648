"""The columns of the report's CSV tables, one tuple per table, in the order the files write them.

The utterance-level table keeps the columns it always had, first and in order (``LEGACY_CSV_COLUMNS``;
scripts read them by position), and adds the later statistics after them. An interval (``[low, high]``) is
two columns, ``<name>_low`` and ``<name>_high``.
"""

from __future__ import annotations

from typing import get_args

from stats.report.document_types import AgreementCoefficient

JUDGE_COLUMNS = ("judge_question", "judge_own_question", "label_mass")
GROUPED_COLUMNS = (
    "grouping",
    "grouped_pearson",
    "grouped_pearson_ci_low",
    "grouped_pearson_ci_high",
    "grouped_spearman",
    "grouped_spearman_ci_low",
    "grouped_spearman_ci_high",
    "grouped_kendall",
    "grouped_kendall_ci_low",
    "grouped_kendall_ci_high",
    "grouped_groups",
    "grouped_groups_total",
    "grouped_left_out",
    "grouped_note",
)

# Each coefficient with its p-value and Fisher-z interval, as two columns per interval.
_CORRELATION_COLUMNS = (
    "pearson",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
)
LEGACY_CSV_COLUMNS = ("question", "metric", "references", "signature", "n", *_CORRELATION_COLUMNS, "note")
CSV_COLUMNS = (
    *LEGACY_CSV_COLUMNS,
    "kendall",
    "kendall_p",
    "kendall_ci_low",
    "kendall_ci_high",
    "pearson_ci_bootstrap_low",
    "pearson_ci_bootstrap_high",
    "spearman_ci_bootstrap_low",
    "spearman_ci_bootstrap_high",
    "group",
    "no_metric_score",
    "implementation",
    # the significance cluster (rank) and, with a grouping, the grouped correlation (Deutsch et al., 2023)
    "rank",
    *GROUPED_COLUMNS,
    "display",  # the metric's name as the page and every export show it (unique in the report)
    # an LLM judge's (stats/report/judges.py): the question it asked, whether it is the row's, and its model's
    # mean probability on the scale's labels
    *JUDGE_COLUMNS,
)
PER_SYSTEM_COLUMNS = ("question", "system", *CSV_COLUMNS[1:])
HUMAN_COLUMNS = (
    "question",
    "label",
    "pearson",
    "pearson_p",
    "spearman",
    "spearman_p",
    "raters",
    "pearson_rater",
    "spearman_rater",
    "note",
)
COMPARISON_COLUMNS = (
    "question",
    "first",
    "first_metric",
    "second",
    "second_metric",
    "n",
    "pearson_difference",
    "williams_t",
    "williams_p",
    "bootstrap_p",
    "spearman_difference",
    "williams_p_spearman",
    "bootstrap_p_spearman",
    "metrics_pearson",
    "winner",
    "note",
    "permutation_statistic",
    "first_statistic",
    "second_statistic",
    "perm_both_p",
    "perm_both_permutations",
    "perm_inputs_p",
    "perm_inputs_permutations",
    "permutation_note",
    "first_display",
    "second_display",
)
SYSTEM_LEVEL_COLUMNS = (
    "question",
    "metric",
    "references",
    "signature",
    "group",
    "system",
    "replies",  # the replies this system's two means run over
    "human_mean",
    "metric_mean",
    "systems",  # the signature's system-level correlation, repeated on each of its systems' lines
    *_CORRELATION_COLUMNS,
    "kendall",
    "kendall_p",
    "note",
    "implementation",
    "display",
)
AGREEMENT_COEFFICIENTS: tuple[AgreementCoefficient, ...] = get_args(AgreementCoefficient)
AGREEMENT_COLUMNS = ("question", "identity", "coefficient", "value", "items", "ratings", "note", "details")
COEFFICIENT_FIELDS = ("value", "items", "ratings", "note")
ANNOTATOR_COLUMNS = (
    "question",
    "annotator",
    "ratings",
    "included",
    "agreement_kappa",
    "pair_kappa_mean",
    "alpha_without",
    "alpha_change_without",
    "pearson_vs_rest",
    "pearson_vs_rest_p",
    "spearman_vs_rest",
    "spearman_vs_rest_p",
    "shared_replies",
)
PAIR_COLUMNS = ("question", "first", "second", "kappa", "items", "note")
FILTER_COLUMNS = (
    "question",
    "kind",
    "threshold",
    "description",
    "annotators_removed",
    "ratings_removed",
    "ratings_total",
    "normalisation",
    "normalisation_note",
    "removed_annotators",
)
QUESTION_COLUMNS = (
    "name",
    "scale_min",
    "scale_max",
    "responses",
    "human_scored",
    "ratings",
    "imported_means",
    "no_human_score",
)
SINGLE_VS_MULTI_COLUMNS = (
    "question",
    "metric",
    *(
        f"{mode}_{field}"
        for mode in ("single", "multi")
        for field in ("signature", "n", "spearman", "spearman_p", "pearson", "pearson_p")
    ),
    "display",
)
DIVERSITY_COLUMNS = ("metric", "inverted", "n", "spearman", "spearman_p", "pearson", "pearson_p", "note")
# the systems' win rates: the people's (``judged_by`` "people"), then each pairwise judge's (its display name)
PAIRWISE_COLUMNS = (
    "system",
    "comparisons",
    "wins",
    "losses",
    "ties",
    "win_rate",
    "ci_low",
    "ci_high",
    "judged_by",
    "signature",
)
# each pairwise judge against the people (stats/report/pairwise_judges.py); ``agreement`` is the share
PAIRWISE_JUDGE_COLUMNS = (
    "metric",
    "signature",
    "pairs",
    "pairs_total",
    "systems",
    "spearman",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "spearman_note",
    "judgments",
    "decisive",
    "agreed",
    "agreement",
    "kappa",
    "position_bias",
    "consistent",
    "ties",
    "note",
    "display",
)
REFERENCES_CURVE_COLUMNS = (
    "question",
    "metric",
    "signature",
    "items",
    "max_references",
    "stored_multi_pearson",
    "references",
    "pearson_mean",
    "pearson_sd",
    "spearman_mean",
    "spearman_sd",
    "point_items",
    "display",
)
ACCURACY_FIELDS = (
    "value",
    "ci_low",
    "ci_high",
    "epsilon",
    "calibrated",
    "accuracy_at_zero",
    "pairs",
    "note",
)
PAIRWISE_ACCURACY_COLUMNS = (
    "question",
    "metric",
    "references",
    "signature",
    *(f"system_{field}" for field in (*ACCURACY_FIELDS, "systems")),
    *(f"context_{field}" for field in (*ACCURACY_FIELDS, "groups")),  # groups: contexts averaged over
    "display",
)
MORE_RATINGS_COLUMNS = ("question", "kind", "sentence")
QUANTILE_COLUMNS = (
    "question",
    "metric",
    "signature",
    "quantile",
    "human_low",
    "human_high",
    "human_mean",
    "metric_mean",
    "items",
    "display",
)
# the legend of the display names, with each LLM judge's question and mean mass on labels
METRIC_NAME_COLUMNS = (
    "display",
    "metric",
    "detail",
    "signature",
    "judge_question",
    "label_mass",
    "label_mass_replies",
)
