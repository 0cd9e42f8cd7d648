"""Meta-evaluation as the metrics field does it: grouped correlations, pairwise accuracy with tie
calibration, permutation tests and significance clusters, and how many more ratings a study needs.

* stats/meta/groups.py: replies by context or system, and the pairs within a group;
* stats/meta/grouped.py: item- and system-grouped Pearson, Spearman and Kendall (Deutsch, Dror and Roth 2021);
* stats/meta/pairwise_accuracy.py: system-level accuracy (Kocmi et al. 2021) and acc_eq within contexts with
  tie calibration (Deutsch, Foster and Freitag 2023);
* stats/meta/permutation/: PERM-BOTH and PERM-INPUTS (Deutsch et al. 2021), the pairs test for acc_eq;
* stats/meta/clusters.py: significance clusters as the WMT metrics task ranks metrics;
* stats/meta/more_ratings.py: interval widths at more replies or more ratings per reply, from the one-way
  ICC model's variance components, in plain sentences.

Pure numpy/scipy: no Django here (import-linter contract).
"""

from stats.meta.clusters import Clusters, significance_clusters
from stats.meta.grouped import GroupedCorrelation, grouped_correlations
from stats.meta.groups import Groups, Pairs, within_group_pairs
from stats.meta.more_ratings import (
    Projection,
    RatingPlan,
    StudyRatings,
    VarianceComponents,
    rating_plan,
    variance_components,
)
from stats.meta.pairwise_accuracy import (
    PairwiseAccuracy,
    TieCalibration,
    TieCounts,
    calibrate_ties,
    reply_pairwise_accuracy,
    system_pairwise_accuracy,
    trivial_accuracy,
)
from stats.meta.permutation import (
    EarlyStop,
    Layout,
    PermutationResult,
    Statistic,
    permutation_tests,
)

__all__ = [
    "Clusters",
    "EarlyStop",
    "GroupedCorrelation",
    "Groups",
    "Layout",
    "Pairs",
    "PairwiseAccuracy",
    "PermutationResult",
    "Projection",
    "RatingPlan",
    "Statistic",
    "StudyRatings",
    "TieCalibration",
    "TieCounts",
    "VarianceComponents",
    "calibrate_ties",
    "grouped_correlations",
    "permutation_tests",
    "rating_plan",
    "reply_pairwise_accuracy",
    "significance_clusters",
    "system_pairwise_accuracy",
    "trivial_accuracy",
    "variance_components",
    "within_group_pairs",
]
