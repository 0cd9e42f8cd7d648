"""How many more ratings: the projections against the truth of the model that generated the ratings.

Ratings are simulated with known variance components: contexts x systems, a reply's true score = system
effect + context effect (shared by the context's replies) + its own effect, each rating = true score + rater
noise. One simulated study gives the estimate; a Monte Carlo study of the generating model at the projected
design gives the true interval width (or power). Each comparison has a tolerance that an estimator which
forgot a part of the model (the noise shrinking with more ratings, the attenuation of a correlation, the
pairing of systems by context) misses: the docstrings say by how much.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from stats.comparisons import williams_test
from stats.meta.more_ratings import (
    StudyRatings,
    correlation_half_width,
    items_needed,
    mean_half_width,
    rating_plan,
    variance_components,
    williams_items_needed,
)

CONTEXT_SD, REPLY_SD, NOISE_SD = math.sqrt(0.5), math.sqrt(0.2), math.sqrt(1.6)
SYSTEM_EFFECTS = {"A": 0.15, "B": 0.0}


def _true_scores(rng: np.random.Generator, contexts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(true scores, systems, contexts) for contexts x (A, B)."""
    context_effect = np.repeat(rng.normal(0, CONTEXT_SD, contexts), 2)
    systems = np.tile(np.array(["A", "B"]), contexts)
    effect = np.array([SYSTEM_EFFECTS[s] for s in systems])
    return (
        effect + context_effect + rng.normal(0, REPLY_SD, 2 * contexts),
        systems,
        np.repeat(np.arange(contexts), 2),
    )


def _study(
    seed: int, contexts: int, k: int, metric_noise: tuple[float, ...] = (0.9, 1.3)
) -> tuple[StudyRatings, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth, systems, context = _true_scores(rng, contexts)
    n = truth.size
    items = np.repeat(np.arange(n), k)
    values = truth[items] + rng.normal(0, NOISE_SD, items.size)
    metrics = {f"m{i}": truth + rng.normal(0, sd, n) for i, sd in enumerate(metric_noise)}
    study = StudyRatings(
        items.tolist(), values.tolist(), list(range(n)), systems.tolist(), context.tolist(), metrics
    )
    return study, truth


def test_variance_components_recover_the_generating_model() -> None:
    study, _ = _study(0, 3000, 3)
    components = variance_components(study.rating_items, study.rating_values)
    assert components is not None
    true_item = CONTEXT_SD**2 + REPLY_SD**2 + 0.15**2 / 4  # the two system means differ by 0.15
    assert components.noise_variance == pytest.approx(NOISE_SD**2, rel=0.04)
    assert components.item_variance == pytest.approx(true_item, rel=0.08)
    assert components.ratings_per_item == pytest.approx(3.0)


def test_icc1_equals_pingouin() -> None:
    """ICC(1) = sigma2_item / (sigma2_item + sigma2_noise) is pingouin's ICC1 on a balanced design."""
    pd = pytest.importorskip("pandas")
    pingouin = pytest.importorskip("pingouin")
    study, _ = _study(1, 60, 4)
    components = variance_components(study.rating_items, study.rating_values)
    assert components is not None
    frame = pd.DataFrame(
        {
            "item": study.rating_items,
            "rater": [i % 4 for i in range(len(study.rating_items))],
            "value": study.rating_values,
        }
    )
    table = pingouin.intraclass_corr(data=frame, targets="item", raters="rater", ratings="value").set_index(
        "Type"
    )
    assert components.icc1 == pytest.approx(float(table.loc["ICC(1,1)", "ICC"]), abs=1e-10)


def test_no_noise_estimate_without_a_reply_rated_twice() -> None:
    assert variance_components(["a", "b", "c"], [1.0, 2.0, 3.0]) is None
    plan = rating_plan(StudyRatings(["a", "b"], [1.0, 2.0], ["a", "b"], ["s", "s"], ["c", "c"]))
    assert plan.components is None
    assert plan.note.startswith("not computable")


def _monte_carlo_system_mean(contexts: int, k: int, runs: int, seed: int) -> float:
    """The true 95% half-width of system A's mean over ``contexts`` replies of k ratings (1.96 x its sd)."""
    rng = np.random.default_rng(seed)
    truth = (
        SYSTEM_EFFECTS["A"]
        + rng.normal(0, CONTEXT_SD, (runs, contexts))
        + rng.normal(0, REPLY_SD, (runs, contexts))
    )
    means = truth + rng.normal(0, NOISE_SD / math.sqrt(k), (runs, contexts))
    return 1.959963984540054 * float(means.mean(axis=1).std())


def test_a_system_means_projected_width_is_the_true_width() -> None:
    """Estimated at 1,000 contexts x 2 ratings; projected to 2,000 replies x 2 ratings, 1,000 x 3 and 1,000 x 5.
    Forgetting that the noise shrinks with k would be 21% off at 5 ratings (tolerance 6%)."""
    study, _ = _study(2, 1000, 2)
    plan = rating_plan(study, designs=[(1, 5)])
    projection = next(p for p in plan.projections if p.kind == "system mean" and p.label == "A")
    by_design = {(w.items, round(w.ratings_per_item, 6)): w.half_width for w in projection.widths}
    assert by_design[(1000, 5.0)] == pytest.approx(_monte_carlo_system_mean(1000, 5, 4000, 3), rel=0.06)
    assert by_design[(1000, 3.0)] == pytest.approx(_monte_carlo_system_mean(1000, 3, 4000, 6), rel=0.06)
    assert by_design[(2000, 2.0)] == pytest.approx(_monte_carlo_system_mean(2000, 2, 4000, 4), rel=0.06)
    assert projection.half_width == pytest.approx(_monte_carlo_system_mean(1000, 2, 4000, 5), rel=0.06)


def _monte_carlo_correlation(n: int, k: int, metric_sd: float, runs: int, seed: int) -> tuple[float, float]:
    """(mean r, half the 2.5-97.5% range of r) of a metric against the human means of k ratings."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, CONTEXT_SD, (runs, n)) + rng.normal(0, REPLY_SD, (runs, n))
    human = truth + rng.normal(0, NOISE_SD / math.sqrt(k), (runs, n))
    metric = truth + rng.normal(0, metric_sd, (runs, n))
    h = human - human.mean(axis=1, keepdims=True)
    m = metric - metric.mean(axis=1, keepdims=True)
    r = (h * m).sum(axis=1) / np.sqrt((h * h).sum(axis=1) * (m * m).sum(axis=1))
    low, high = np.percentile(r, [2.5, 97.5])
    return float(r.mean()), float(high - low) / 2.0


def test_a_correlations_projected_width_is_the_true_width() -> None:
    """Estimated at 1,200 replies x 2 ratings (r about 0.47); projected to 6 ratings per reply, where the
    expected r rises to about 0.58: ignoring that attenuation would overstate the width by 15% (tolerance 5%)."""
    study, _ = _study(6, 600, 2, metric_noise=(0.9,))
    plan = rating_plan(study, designs=[(1, 6)])
    projection = next(p for p in plan.projections if p.kind == "metric correlation")
    mean_now, half_now = _monte_carlo_correlation(1200, 2, 0.9, 3000, 8)
    assert projection.estimate == pytest.approx(mean_now, abs=0.05)
    assert projection.half_width == pytest.approx(half_now, rel=0.05)
    six = projection.widths[-1]
    assert (six.items, six.ratings_per_item) == (1200, 6.0)
    assert six.half_width == pytest.approx(_monte_carlo_correlation(1200, 6, 0.9, 3000, 7)[1], rel=0.05)
    three = projection.widths[1]
    assert (three.items, three.ratings_per_item) == (1200, 3.0)
    assert three.half_width == pytest.approx(_monte_carlo_correlation(1200, 3, 0.9, 3000, 10)[1], rel=0.05)
    double = projection.widths[2]
    assert (double.items, double.ratings_per_item) == (2400, 2.0)
    assert double.half_width == pytest.approx(_monte_carlo_correlation(2400, 2, 0.9, 2000, 9)[1], rel=0.05)


def _paired_power(contexts: int, k: int, runs: int, seed: int) -> float:
    """Monte Carlo power of the paired z-test of A against B at p < 0.05 (true difference 0.15)."""
    rng = np.random.default_rng(seed)
    context_effect = rng.normal(0, CONTEXT_SD, (runs, contexts, 1))
    truth = np.array([SYSTEM_EFFECTS["A"], SYSTEM_EFFECTS["B"]]) + context_effect
    truth = truth + rng.normal(0, REPLY_SD, (runs, contexts, 2))
    means = truth + rng.normal(0, NOISE_SD / math.sqrt(k), (runs, contexts, 2))
    diffs = means[:, :, 0] - means[:, :, 1]
    z = diffs.mean(axis=1) / (diffs.std(axis=1, ddof=1) / math.sqrt(contexts))
    return float(np.mean(np.abs(z) > 1.959963984540054))


def test_the_replies_needed_to_tell_two_systems_apart_give_the_promised_power() -> None:
    """The plan's variance per context (estimated on 400 contexts x 2 ratings) turned into the contexts needed
    for 80% power at the true difference 0.15: a Monte Carlo study of the paired test there finds 80% power
    (tolerance 0.05). An estimator that forgot the pairing by context (variance 3.0 instead of 2.0 per context)
    would ask for 1.5 times as many contexts: power 0.93."""
    study, _ = _study(10, 400, 2)
    plan = rating_plan(study)
    difference = next(p for p in plan.projections if p.kind == "system difference")
    now = difference.widths[0]
    assert (now.items, now.ratings_per_item) == (400, 2.0)
    unit_variance = (now.half_width / 1.959963984540054) ** 2 * now.items
    assert unit_variance == pytest.approx(2 * REPLY_SD**2 + 2 * NOISE_SD**2 / 2, rel=0.15)
    contexts = math.ceil(items_needed(0.15, unit_variance))
    assert _paired_power(contexts, 2, 3000, 11) == pytest.approx(0.8, abs=0.05)
    # The plan itself asks for the difference it observed.
    if difference.more_items is not None and math.isfinite(difference.more_items):
        expected = max(0, math.ceil(items_needed(difference.estimate, unit_variance)) - 400)
        assert difference.more_items == expected
        assert difference.more_ratings == 2 * expected
        assert re.fullmatch(
            rf"to tell A from B at p < 0\.05 you need about {2 * expected:,} more rated replies, 2 ratings each: "
            rf"{expected:,} more contexts with a reply from each \(80% power, if the difference stays at [+-]0\.\d\d\)",
            difference.sentence,
        )


def test_the_replies_needed_for_two_metrics_give_williams_the_promised_power() -> None:
    """williams_items_needed at the model's true correlations (human means of 3 ratings; metric noise 0.7
    and 1.0): Williams' test at p < 0.05 rejects in about 80% of Monte Carlo studies of that size (tolerance
    0.06)."""
    true_var = CONTEXT_SD**2 + REPLY_SD**2
    human_var, a_var, b_var = true_var + NOISE_SD**2 / 3, true_var + 0.49, true_var + 1.0
    r12 = true_var / math.sqrt(human_var * a_var)
    r13 = true_var / math.sqrt(human_var * b_var)
    r23 = true_var / math.sqrt(a_var * b_var)
    n = math.ceil(williams_items_needed(r12, r13, r23))
    rng = np.random.default_rng(13)
    runs, rejections = 600, 0
    for _ in range(runs):
        truth = rng.normal(0, math.sqrt(true_var), n)
        human = truth + rng.normal(0, NOISE_SD / math.sqrt(3), n)
        a, b = truth + rng.normal(0, 0.7, n), truth + rng.normal(0, 1.0, n)
        r = np.asarray(np.corrcoef(np.stack([human, a, b])))
        result = williams_test(float(r[0, 1]), float(r[0, 2]), float(r[1, 2]), n)
        rejections += result.p_value is not None and result.p_value < 0.05
    assert rejections / runs == pytest.approx(0.8, abs=0.06)


def test_the_plan_asks_williams_for_the_observed_correlations() -> None:
    study, _ = _study(12, 300, 3, metric_noise=(0.7, 1.0))
    plan = rating_plan(study)
    projection = next(p for p in plan.projections if p.kind == "metric difference")
    human = np.array(
        [
            np.mean([v for i, v in zip(study.rating_items, study.rating_values, strict=True) if i == reply])
            for reply in study.replies
        ]
    )
    a, b = np.asarray(study.metrics["m0"]), np.asarray(study.metrics["m1"])
    r = np.asarray(np.corrcoef(np.stack([human, a, b])))
    assert projection.estimate == pytest.approx(r[0, 1] - r[0, 2], abs=1e-12)
    test = williams_test(float(r[0, 1]), float(r[0, 2]), float(r[1, 2]), human.size)
    assert projection.p_value == pytest.approx(test.p_value, abs=1e-12)
    if projection.more_items is not None and math.isfinite(projection.more_items):
        needed = williams_items_needed(float(r[0, 1]), float(r[0, 2]), float(r[1, 2]))
        assert projection.more_items == max(0, math.ceil(needed) - human.size)
        assert "(Williams' test) you need about" in projection.sentence


def test_half_width_helpers_by_hand() -> None:
    # Mean of 100 replies, spread 0.3, noise 1.2 over 4 ratings: 1.96 * sqrt((0.3 + 0.3) / 100).
    assert mean_half_width(0.3, 1.2, 100, 4) == pytest.approx(1.959963984540054 * math.sqrt(0.006))
    # Fisher-z at r = 0, n = 103: tanh(1.96 / 10).
    assert correlation_half_width(0.0, 103) == pytest.approx(math.tanh(0.1959963984540054))
    # (1.96 + 0.8416)^2 * 2 / 0.5^2 = 62.79 units for 80% power.
    assert items_needed(0.5, 2.0) == pytest.approx((1.959963984540054 + 0.8416212335729143) ** 2 * 8)
    assert math.isinf(items_needed(0.0, 1.0))


def test_the_sentences_say_it_plainly() -> None:
    study, _ = _study(14, 200, 3)
    plan = rating_plan(study)
    sentences = plan.sentences
    assert any(
        re.fullmatch(
            r"correlation of m0: -?\d\.\d\d ±0\.\d\d; a 4th rating per reply (narrows it to|leaves it at) "
            r"±0\.\d\d; .*",
            s,
        )
        for s in sentences
    )
    # a sentence never starts with a name (a system's or a metric's, which the report would capitalise)
    assert any(s.startswith("mean of A: ") for s in sentences)
    assert not any(s.startswith(("A", "B", "m0")) for s in sentences)
    assert any(
        "B" in s and ("to tell" in s or "already differ" in s or "score the same" in s) for s in sentences
    )
    assert all(p.widths for p in plan.projections)


def test_an_interval_that_one_more_rating_leaves_alone_is_not_said_to_narrow() -> None:
    """ "narrows m0's interval from ±0.21 to ±0.21" said nothing changes; it says so now."""
    study, _ = _study(14, 200, 3)
    plan = rating_plan(study)
    for projection in plan.projections:
        if projection.widths and "narrows it to" in projection.sentence:
            before, after = projection.sentence.split("narrows it to ±", 1)
            now = before.rsplit("±", 1)[1].split(";")[0]
            assert after[:4] != now[:4]
    assert any("leaves it at" in projection.sentence for projection in plan.projections)
