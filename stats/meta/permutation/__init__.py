"""Is metric A's statistic really higher than metric B's? The permutation tests of Deutsch, Dror and Roth (2021).

Deutsch et al. (2021), section 5, test H0: r(A, people) <= r(B, people) by swapping the two metrics' scores
at random and recomputing both statistics: under H0 the two metrics are exchangeable, so the observed
difference should look like the swapped ones. The study is a matrix systems x inputs (here contexts):

* PERM-BOTH (their recommendation: section 6, it keeps its size and has the most power in their
  simulations): every cell (one system's reply to one context) is swapped independently with probability
  1/2. With several systems per context this permutes systems and contexts jointly; with one reply per
  context it swaps replies.
* PERM-INPUTS (the input-only variant): all replies of one context are swapped together.

The metrics' scores are standardised first (z-scores over the replies both metrics scored), as
mt-metrics-eval's ``PermutationSigDiff`` does, since swapping only makes sense on one scale. Missing cells
(a reply one of the two metrics did not score, or without a human score) are left out of that pair's test.
A z-score is kept as its group's offset and its deviation within the group, never formed as one double
(stats/meta/swapped_correlation.py): the statistics a test compares are the rows' (stats/meta/grouped.py)
for values of any scale, also for a metric whose spread inside a group is tiny beside its level.

Statistics (:class:`Statistic`):

* ``pearson``, ``spearman`` with grouping none, context or system (stats/meta/grouped.py): the statistic of
  a swapped matrix is a function of per-group sums that are linear in the swap mask (of each metric's
  scaled deviations d, h*d and d^2 over the swapped units, and of the swapped replies and their h), so a block
  of permutations costs one matrix product per metric, shared by every pair. Where each
  swap unit lies in one group and groups have few units (within contexts: PERM-BOTH swaps a context's few
  replies, PERM-INPUTS the context whole), each group's r under each of its 2^k swap patterns is tabled once
  per pair and a permutation's statistic is gathered from the tables (stats/meta/swap_patterns.py). For
  Spearman the scores are first replaced by their (within-group) average ranks, and the swapped statistic
  is Pearson's r of the swapped ranks: at the identity it is Spearman's rho exactly, and no permutation
  re-ranks (re-ranking 1,000 permutations of 10,000 replies per pair costs seconds). This is a deviation from
  re-ranking after every swap, which mt-metrics-eval does; the test stays a permutation test of the
  exchangeability of the two metrics' ranks.
* ``system_accuracy``: Kocmi et al. (2021) pairwise accuracy of system means (acc_eq with tie calibration,
  recalibrated in every permutation, when asked), under PERM-BOTH or PERM-INPUTS: system means are linear in
  the swap mask too.
* ``reply_accuracy``: acc_eq within contexts with tie calibration (stats/meta/pairwise_accuracy.py). Deutsch,
  Foster and Freitag (2023) compare such accuracies with the *pairs* permutation test of mt-metrics-eval
  (``PairwisePermutationSigDiff``): each metric keeps its own calibrated epsilon, and what is swapped is the
  outcome of a pair of replies (agreement or not) between the two metrics, each pair independently. The
  statistic is then linear in the swaps: every pair of metrics costs one matrix product per block.

The p-value (one-sided, that the first metric's statistic is the higher) is (1 + #{swapped differences >=
the observed one}) / (1 + permutations): the +1 keeps a Monte Carlo p-value valid and never 0 (Phipson and
Smyth 2010; mt-metrics-eval reports the plain share). ``p_two_sided`` counts |swapped| >= |observed|.
Differences equal up to 1e-12 count as equal, so that rounding never decides.

Early stopping as the WMT metrics task runs mt-metrics-eval (its ``Task`` defaults: blocks of 100
permutations, stop when the running share is under 0.02 or over 0.5); ``EarlyStop(block=permutations)``
turns it off. Permutation masks come from one seeded generator in a fixed order, the same for every pair of
metrics (common random numbers), so a pair's p-value does not depend on which other pairs were tested. A pair
asked in both directions is run once: the reverse's swapped differences are the negated ones on the same
masks, counted with its own early stop, so both results are those of separate runs (the report's clusters
take their one-sided tests from its comparisons' run this way).

The package, in the order a test runs: ``types.py`` (what is asked and answered), ``tester.py`` (a test per
pair of metric columns, one plan per set of replies), ``correlation_plan.py`` and ``accuracy_plans.py`` (what
each statistic needs of a swap), ``plan.py`` (what every plan shares, and one block of permutations),
``masks.py`` (the swap masks and the sums they select), ``counting.py`` (the p-values and early stopping).

Pure numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

from stats.meta.permutation.masks import swap_masks
from stats.meta.permutation.tester import permutation_tests
from stats.meta.permutation.types import (
    DEFAULT_EARLY_STOP,
    EQUAL,
    PERM_BOTH,
    PERM_INPUTS,
    EarlyStop,
    Grouping,
    Layout,
    PermutationResult,
    Scheme,
    Statistic,
    StatisticName,
)

__all__ = [
    "DEFAULT_EARLY_STOP",
    "EQUAL",
    "PERM_BOTH",
    "PERM_INPUTS",
    "EarlyStop",
    "Grouping",
    "Layout",
    "PermutationResult",
    "Scheme",
    "Statistic",
    "StatisticName",
    "permutation_tests",
    "swap_masks",
]
