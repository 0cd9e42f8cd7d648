"""How many more ratings? How the intervals that matter shrink with more rated replies or more ratings per reply.

From the ratings collected so far (a long table: one entry per rating, naming its reply), the one-way
random-effects model of the intraclass correlation (Shrout and Fleiss 1979, ICC(1); McGraw and Wong 1996,
case 1) splits a rating into the reply's true score and rater noise, y_ij = mu + a_i + e_ij:

* sigma2_item = var(a_i), the spread of the replies' true scores, and sigma2_noise = var(e_ij), raters'
  disagreement about one reply (rater effects included: future ratings come from new raters, as in a crowd
  design), estimated by the unbalanced one-way ANOVA (Searle, Casella and McCulloch 1992, section 3.5):
  sigma2_noise = MSW, sigma2_item = (MSB - MSW) / k0 with k0 = (N - sum k_i^2 / N) / (a - 1), floored at 0.
* A reply's human score is the mean of its k ratings: its variance is sigma2_item + sigma2_noise / k and its
  reliability rho_k = sigma2_item / (sigma2_item + sigma2_noise / k) (the Spearman-Brown formula).

What follows for each interval, at n replies with k ratings each (normal quantiles; 95% by default):

* A system's mean: half-width z * sqrt((s2_within + sigma2_noise / k) / n), with s2_within the system's own
  true-score spread (the observed variance of its reply means minus the noise part of it).
* The difference between two systems: paired over the contexts both answered (the usual dialog design), the
  variance per context is s2_diff + sigma2_noise (1/k + 1/k); without shared contexts the two means' variances
  add. The replies needed to tell them apart at p < alpha with the given power, if the difference stays as
  observed: n = (z_{1-alpha/2} + z_{power})^2 * variance / difference^2 (the usual normal sample-size formula).
* A metric's correlation with the human means: more ratings per reply make the human side more reliable, so
  the expected correlation grows as r_k = r_true * sqrt(rho_k), with r_true = r_now / sqrt(rho_now) (Spearman's
  correction for attenuation; the metric has no rating noise), and more replies narrow the Fisher-z interval
  tanh(artanh(r_k) -/+ z / sqrt(n - 3)) (the report's interval for Pearson's r).
* The difference between two metrics' correlations: Williams' t (stats/comparisons.py) at the projected
  correlations (both attenuated alike; the metrics' correlation with each other does not change), and the
  replies needed for it to reach z_{1-alpha/2} + z_{power}.

Each projection is said in a sentence. Checked by tests/stats/meta/test_more_ratings.py, which simulates
ratings with known variance components and compares these projections with the widths a Monte Carlo study
of the generating model gives.

Pure numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as scipy_stats

from stats.centred import pearson
from stats.comparisons import williams_test
from stats.meta.groups import Groups

SIGNIFICANCE = 0.05
POWER = 0.8
MAX_ITEMS = 10_000_000  # beyond this the answer is "more than" (a difference too small to ever show)


@dataclass(frozen=True)
class VarianceComponents:
    """The one-way model's components from ``ratings`` ratings of ``items`` replies."""

    items: int
    ratings: int
    item_variance: float  # sigma2_item: the spread of the replies' true scores
    noise_variance: float  # sigma2_noise: one rating's deviation from its reply's true score
    mean_inverse_k: float  # the mean of 1/k_i over the replies (k_i: ratings of reply i)

    @property
    def ratings_per_item(self) -> float:
        """The harmonic mean of the ratings per reply (what the replies' noise corresponds to)."""
        return 1.0 / self.mean_inverse_k

    @property
    def icc1(self) -> float:
        total = self.item_variance + self.noise_variance
        return self.item_variance / total if total > 0 else 0.0

    def reliability(self, k: float) -> float:
        """Of a reply's mean of k ratings (Spearman-Brown)."""
        total = self.item_variance + self.noise_variance / k
        return self.item_variance / total if total > 0 else 0.0


def variance_components(items: Sequence[Hashable], values: Sequence[float]) -> VarianceComponents | None:
    """The unbalanced one-way ANOVA estimates; ``None`` without a reply rated twice (no noise estimate)."""
    groups = Groups.of(items)
    y = np.asarray(values, dtype=np.float64)
    if y.size != groups.n:
        raise ValueError(f"{groups.n} replies for {y.size} ratings")
    k = np.bincount(groups.codes, minlength=groups.count).astype(np.float64)
    if not np.any(k >= 2) or groups.count < 2:
        return None
    means = np.bincount(groups.codes, y, groups.count) / k
    total, a = float(k.sum()), float(groups.count)
    within = float(np.sum((y - means[groups.codes]) ** 2))
    between = float(np.sum(k * (means - y.mean()) ** 2))
    msw = within / (total - a)
    msb = between / (a - 1.0)
    k0 = (total - float(np.sum(k * k)) / total) / (a - 1.0)
    item_variance = max(0.0, (msb - msw) / k0)
    return VarianceComponents(int(a), int(total), item_variance, msw, float(np.mean(1.0 / k)))


def mean_half_width(spread: float, noise: float, n: float, k: float, confidence: float = 0.95) -> float:
    """Half-width of a mean over n replies of k ratings each: z * sqrt((spread + noise / k) / n)."""
    return _z(confidence) * math.sqrt((spread + noise / k) / n)


def correlation_half_width(r: float, n: float, confidence: float = 0.95) -> float:
    """Half the width of the Fisher-z interval of Pearson's r over n replies."""
    if n <= 3:
        return math.inf
    r = max(-0.999999, min(0.999999, r))
    z, h = math.atanh(r), _z(confidence) / math.sqrt(n - 3.0)
    return (math.tanh(z + h) - math.tanh(z - h)) / 2.0


def items_needed(
    difference: float, unit_variance: float, alpha: float = SIGNIFICANCE, power: float = POWER
) -> float:
    """Units (replies, or contexts for a paired difference) for a two-sided test at ``alpha`` to detect
    ``difference`` with ``power``: (z_{1-alpha/2} + z_power)^2 * variance / difference^2."""
    if difference == 0:
        return math.inf
    scale = _z(1.0 - alpha) + float(scipy_stats.norm.ppf(power))
    return scale * scale * unit_variance / (difference * difference)


def williams_items_needed(
    r12: float, r13: float, r23: float, alpha: float = SIGNIFICANCE, power: float = POWER
) -> float:
    """Replies for Williams' t at correlations r12, r13 (with the human scores) and r23 (between the two
    metrics) to reach z_{1-alpha/2} + z_power; infinite when r12 = r13."""
    if r12 == r13:
        return math.inf
    target = _z(1.0 - alpha) + float(scipy_stats.norm.ppf(power))
    low, high = 5.0, float(MAX_ITEMS)
    if _williams_t(r12, r13, r23, high) < target:
        return math.inf
    while high - low > 0.5:
        middle = (low + high) / 2.0
        if _williams_t(r12, r13, r23, middle) >= target:
            high = middle
        else:
            low = middle
    return high


@dataclass(frozen=True)
class ProjectedWidth:
    items: int  # replies (or contexts, for a paired difference)
    ratings_per_item: float
    half_width: float


@dataclass(frozen=True)
class Projection:
    """One interval now and at larger designs; for a difference, how many more replies would tell the two
    apart (``more_items``: ``None`` when already apart, ``math.inf`` when no number would)."""

    kind: str  # "system mean", "system difference", "metric correlation", "metric difference"
    label: str
    estimate: float
    half_width: float
    widths: tuple[ProjectedWidth, ...]
    sentence: str
    more_items: float | None = None
    more_ratings: int | None = None  # more rated replies (several per context for a paired difference)
    p_value: float | None = None


@dataclass(frozen=True)
class RatingPlan:
    components: VarianceComponents | None
    projections: tuple[Projection, ...] = ()
    note: str = ""

    @property
    def sentences(self) -> list[str]:
        return [projection.sentence for projection in self.projections]


@dataclass(frozen=True)
class StudyRatings:
    """What the estimate reads: every rating (``rating_items[i]`` is the reply of ``rating_values[i]``), and
    per reply of ``replies`` its system, context and metric values (NaN where a metric has none)."""

    rating_items: Sequence[Hashable]
    rating_values: Sequence[float]
    replies: Sequence[Hashable]
    systems: Sequence[Hashable]
    contexts: Sequence[Hashable]
    metrics: Mapping[str, Sequence[float] | np.ndarray] = field(default_factory=dict)


def rating_plan(
    study: StudyRatings,
    *,
    system_pairs: Sequence[tuple[Hashable, Hashable]] | None = None,
    metric_pairs: Sequence[tuple[str, str]] | None = None,
    designs: Sequence[tuple[float, float]] = (),
    confidence: float = 0.95,
    alpha: float = SIGNIFICANCE,
    power: float = POWER,
) -> RatingPlan:
    """Every projection: each system's mean, each pair of systems (all, or ``system_pairs``), each metric's
    correlation and each pair of metrics (all, or ``metric_pairs``).

    Each projection's ``widths`` are the half-widths now, with one more rating per reply, with twice and four
    times the replies, then at every extra design of ``designs``: (times the replies, ratings per reply)."""
    components = variance_components(study.rating_items, study.rating_values)
    if components is None:
        return RatingPlan(
            None, note="not computable: no reply has two ratings yet, so rater noise is unknown"
        )
    item_of = {reply: index for index, reply in enumerate(study.replies)}
    codes = np.array([item_of[item] for item in study.rating_items], dtype=np.int64)
    values = np.asarray(study.rating_values, dtype=np.float64)
    count = np.bincount(codes, minlength=len(study.replies)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.bincount(codes, values, len(study.replies)) / count
    rated = count > 0
    design = _Design(components, means, count, rated, confidence, alpha, power, tuple(designs))
    projections: list[Projection] = []
    systems = np.asarray([str(system) for system in study.systems], dtype=object)
    names = sorted({str(system) for system in study.systems})
    for name in names:
        projections.append(design.system_mean(name, rated & (systems == name)))
    pairs = (
        system_pairs
        if system_pairs is not None
        else [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    )
    contexts = Groups.of(study.contexts)
    for first, second in pairs:
        projections.append(design.system_difference(str(first), str(second), systems, contexts))
    metric_values = {name: np.asarray(column, dtype=np.float64) for name, column in study.metrics.items()}
    for name, column in metric_values.items():
        projections.append(design.metric_correlation(name, column))
    metric_names = list(metric_values)
    chosen = (
        metric_pairs
        if metric_pairs is not None
        else [(a, b) for i, a in enumerate(metric_names) for b in metric_names[i + 1 :]]
    )
    for first, second in chosen:
        projections.append(
            design.metric_difference(first, second, metric_values[first], metric_values[second])
        )
    return RatingPlan(components, tuple(projections))


@dataclass(frozen=True)
class _Design:
    components: VarianceComponents
    means: np.ndarray  # per reply: the mean of its ratings (NaN where unrated)
    count: np.ndarray  # per reply: its ratings
    rated: np.ndarray
    confidence: float
    alpha: float
    power: float
    extra: tuple[tuple[float, float], ...] = ()

    @property
    def k_now(self) -> float:
        return self.components.ratings_per_item

    @property
    def k_next(self) -> int:
        return math.floor(self.k_now + 1e-9) + 1

    def system_mean(self, name: str, members: np.ndarray) -> Projection:
        noise = self.components.noise_variance
        n = int(members.sum())
        if n < 2:
            sentence = f"mean of {name}: not computable with {n} rated replies"
            return Projection("system mean", name, math.nan, math.inf, (), sentence)
        inverse_k = float(np.mean(1.0 / self.count[members]))
        spread = max(0.0, float(np.var(self.means[members], ddof=1)) - noise * inverse_k)
        now = mean_half_width(spread, noise, n, 1.0 / inverse_k, self.confidence)
        widths = self._widths(lambda items, k: mean_half_width(spread, noise, items, k, self.confidence), n)
        more_rating = widths[1].half_width
        double = widths[2].half_width
        sentence = (
            f"mean of {name}: {float(np.mean(self.means[members])):.2f} ±{now:.2f}; "
            f"{self._narrowing('it', now, more_rating)}, "
            f"twice the rated replies ({2 * n:,}, {self._k_text()} each) to ±{double:.2f}"
        )
        return Projection("system mean", name, float(np.mean(self.means[members])), now, widths, sentence)

    def system_difference(self, first: str, second: str, systems: np.ndarray, contexts: Groups) -> Projection:
        noise = self.components.noise_variance
        label = f"{first} - {second}"
        a_rows = np.flatnonzero(self.rated & (systems == first))
        b_rows = np.flatnonzero(self.rated & (systems == second))
        if a_rows.size < 2 or b_rows.size < 2:
            sentence = f"systems {first} and {second}: not computable (each needs 2 rated replies)"
            return Projection("system difference", label, math.nan, math.inf, (), sentence)
        a_by_context = dict(zip(contexts.codes[a_rows].tolist(), a_rows.tolist(), strict=False))
        b_by_context = dict(zip(contexts.codes[b_rows].tolist(), b_rows.tolist(), strict=False))
        shared = sorted(set(a_by_context) & set(b_by_context))
        per_unit_replies = 2
        if len(shared) >= 3:
            a = np.array([a_by_context[c] for c in shared])
            b = np.array([b_by_context[c] for c in shared])
            diffs = self.means[a] - self.means[b]
            difference = float(np.mean(diffs))
            inverse = float(np.mean(1.0 / self.count[a] + 1.0 / self.count[b]))
            spread = max(0.0, float(np.var(diffs, ddof=1)) - noise * inverse)
            units = len(shared)

            def unit_variance(k: float) -> float:
                return spread + 2.0 * noise / k

            now_variance = (spread + noise * inverse) / units
            unit_name = "contexts with a reply from each"
        else:
            a_mean, b_mean = self.means[a_rows], self.means[b_rows]
            difference = float(np.mean(a_mean) - np.mean(b_mean))
            a_spread = max(
                0.0, float(np.var(a_mean, ddof=1)) - noise * float(np.mean(1.0 / self.count[a_rows]))
            )
            b_spread = max(
                0.0, float(np.var(b_mean, ddof=1)) - noise * float(np.mean(1.0 / self.count[b_rows]))
            )
            units = int(min(a_rows.size, b_rows.size))

            def unit_variance(k: float) -> float:
                return a_spread + b_spread + 2.0 * noise / k

            now_variance = (
                float(np.var(a_mean, ddof=1)) / a_rows.size + float(np.var(b_mean, ddof=1)) / b_rows.size
            )
            unit_name = "rated replies of each system"
        z = _z(self.confidence)
        now = z * math.sqrt(now_variance)
        p_value = (
            float(2.0 * scipy_stats.norm.sf(abs(difference) / math.sqrt(now_variance)))
            if now_variance > 0
            else None
        )
        widths = self._widths(lambda items, k: z * math.sqrt(unit_variance(k) / items), units)
        needed = items_needed(difference, unit_variance(self.k_now), self.alpha, self.power)
        k_text = self._k_text()
        if p_value is not None and p_value < self.alpha:
            more_items: float | None = None
            sentence = (
                f"systems {first} and {second} already differ at p < {self.alpha:g} "
                f"(difference {difference:+.2f} ±{now:.2f}, p = {p_value:.3g})"
            )
        elif math.isinf(needed) or needed > MAX_ITEMS:
            more_items = math.inf
            sentence = (
                f"systems {first} and {second} score the same so far ({difference:+.2f}): no number of ratings is "
                f"likely to tell them apart at p < {self.alpha:g}"
            )
        else:
            more_items = max(0.0, math.ceil(needed) - units)
            replies = int(more_items) * per_unit_replies
            sentence = (
                f"to tell {first} from {second} at p < {self.alpha:g} you need about {replies:,} more rated "
                f"replies, {k_text} each: {int(more_items):,} more {unit_name} "
                f"({self.power:.0%} power, if the difference stays at {difference:+.2f})"
            )
        more_ratings = (
            None if more_items is None or math.isinf(more_items) else int(more_items) * per_unit_replies
        )
        return Projection(
            "system difference", label, difference, now, widths, sentence, more_items, more_ratings, p_value
        )

    def metric_correlation(self, name: str, column: np.ndarray) -> Projection:
        present = self.rated & np.isfinite(column)
        n = int(present.sum())
        r_now = _pearson(self.means[present], column[present])
        if r_now is None or n <= 3:
            sentence = f"correlation of {name}: not computable on {n} rated replies"
            return Projection("metric correlation", name, math.nan, math.inf, (), sentence)
        r_true = self._disattenuated(r_now, present)
        now = correlation_half_width(r_now, n, self.confidence)
        widths = self._widths(
            lambda items, k: correlation_half_width(
                r_true * math.sqrt(self.components.reliability(k)), items, self.confidence
            ),
            n,
        )
        sentence = (
            f"correlation of {name}: {r_now:.2f} ±{now:.2f}; "
            f"{self._narrowing('it', now, widths[1].half_width)}; twice the rated replies ({2 * n:,}, "
            f"{self._k_text()} each) to ±{widths[2].half_width:.2f}"
        )
        return Projection("metric correlation", name, r_now, now, widths, sentence)

    def metric_difference(self, first: str, second: str, a: np.ndarray, b: np.ndarray) -> Projection:
        present = self.rated & np.isfinite(a) & np.isfinite(b)
        n = int(present.sum())
        label = f"{first} - {second}"
        human = self.means[present]
        r12, r13, r23 = (
            _pearson(human, a[present]),
            _pearson(human, b[present]),
            _pearson(a[present], b[present]),
        )
        if r12 is None or r13 is None or r23 is None or n <= 3:
            sentence = f"metrics {first} and {second}: not computable on {n} rated replies"
            return Projection("metric difference", label, math.nan, math.inf, (), sentence)
        test = williams_test(r12, r13, r23, n)
        true12, true13 = self._disattenuated(r12, present), self._disattenuated(r13, present)
        difference = r12 - r13

        def width(items: float, k: float) -> float:
            scale = math.sqrt(self.components.reliability(k))
            t = _williams_t(true12 * scale, true13 * scale, r23, items)
            return abs(true12 - true13) * scale / t * _z(self.confidence) if t > 0 else math.inf

        now = abs(difference) / abs(test.t) * _z(self.confidence) if test.t else math.inf
        widths = self._widths(width, n)
        needed = williams_items_needed(r12, r13, r23, self.alpha, self.power)
        if test.p_value is not None and test.p_value < self.alpha:
            more: float | None = None
            sentence = (
                f"metrics {first} and {second} already differ at p < {self.alpha:g} "
                f"(Williams' test, p = {test.p_value:.3g})"
            )
        elif math.isinf(needed):
            more = math.inf
            sentence = (
                f"metrics {first} and {second} correlate alike so far ({r12:.2f} and {r13:.2f}): no number of ratings is "
                f"likely to tell them apart at p < {self.alpha:g}"
            )
        else:
            more = max(0.0, math.ceil(needed) - n)
            sentence = (
                f"to tell {first} from {second} at p < {self.alpha:g} (Williams' test) you need about "
                f"{int(more):,} more rated replies, {self._k_text()} each "
                f"({self.power:.0%} power, if the correlations stay at {r12:.2f} and {r13:.2f})"
            )
        more_ratings = None if more is None or math.isinf(more) else int(more)
        return Projection(
            "metric difference", label, difference, now, widths, sentence, more, more_ratings, test.p_value
        )

    def _disattenuated(self, r: float, present: np.ndarray) -> float:
        inverse_k = float(np.mean(1.0 / self.count[present]))
        reliability = self.components.reliability(1.0 / inverse_k)
        if reliability <= 0:
            return r
        return max(-1.0, min(1.0, r / math.sqrt(reliability)))

    def _widths(self, width: Callable[[float, float], float], n: int) -> tuple[ProjectedWidth, ...]:
        """Now (n replies, k now), one more rating per reply, twice the replies, four times the replies."""
        designs = [(n, self.k_now), (n, float(self.k_next)), (2 * n, self.k_now), (4 * n, self.k_now)]
        designs += [(round(factor * n), float(k)) for factor, k in self.extra]
        return tuple(ProjectedWidth(items, k, float(width(items, k))) for items, k in designs)

    def _narrowing(self, subject: str, now: float, after: float) -> str:
        """What one more rating per reply does to an interval, as it prints: "narrows it to ±0.18", or "leaves it
        at ±0.21" when the two round alike ("narrows from ±0.21 to ±0.21")."""
        more = f"a {_ordinal(self.k_next)} rating per reply"
        if f"{after:.2f}" == f"{now:.2f}":
            return f"{more} leaves {subject} at ±{now:.2f}"
        return f"{more} narrows {subject} to ±{after:.2f}"

    def _k_text(self) -> str:
        k = self.k_now
        return f"{k:.0f} ratings" if abs(k - round(k)) < 0.05 else f"{k:.1f} ratings"


def _williams_t(r12: float, r13: float, r23: float, n: float) -> float:
    determinant = 1.0 - r12 * r12 - r13 * r13 - r23 * r23 + 2.0 * r12 * r13 * r23
    mean = (r12 + r13) / 2.0
    denominator = 2.0 * (n - 1.0) / (n - 3.0) * determinant + mean * mean * (1.0 - r23) ** 3
    if denominator <= 0:
        return math.inf
    return abs(r12 - r13) * math.sqrt((n - 1.0) * (1.0 + r23) / denominator)


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    return pearson(x, y) if x.size >= 3 else None


def _z(confidence: float) -> float:
    return float(scipy_stats.norm.ppf(0.5 + confidence / 2.0))


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"
