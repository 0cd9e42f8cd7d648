"""stats/benchmark: each cell against the statistic computed another way (scipy per group, loops over system
pairs, counts by hand), the table's mean, mean rank and best against hand values, the formats' markers."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.benchmark.cells import BenchmarkCell, study_cells, trivial_accuracy
from stats.benchmark.figure import benchmark_heatmap
from stats.benchmark.formats import benchmark_json, benchmark_latex, benchmark_text
from stats.benchmark.options import BenchmarkOptions
from stats.benchmark.table import NOT_SCORED, MetricKey, StudyColumn, benchmark_table
from stats.meta import Groups
from stats.report.types import OptionError


def _study(seed: int = 0, contexts: int = 12, systems: int = 4):
    rng = np.random.default_rng(seed)
    n = contexts * systems
    context = [f"c{i // systems}" for i in range(n)]
    system = [f"s{i % systems}" for i in range(n)]
    quality = rng.normal(size=n) + np.arange(n) % systems * 0.4
    human = np.round(np.clip(3 + quality + rng.normal(scale=0.5, size=n), 1, 5))
    values = np.column_stack([quality + rng.normal(scale=s, size=n) for s in (0.3, 1.0, 3.0)])
    values[5, 1] = np.nan
    return human, values, context, system


@pytest.mark.parametrize("statistic", ["pearson", "spearman", "kendall"])
def test_a_flat_cell_is_scipys_coefficient_and_p_value(statistic) -> None:
    human, values, context, system = _study()
    cells = study_cells(human, values, context, system, BenchmarkOptions(statistic, "none"))
    function = {"pearson": scipy_stats.pearsonr, "spearman": scipy_stats.spearmanr}.get(
        statistic, scipy_stats.kendalltau
    )
    for column, cell in enumerate(cells):
        present = np.isfinite(values[:, column])
        expected = function(human[present], values[present, column])
        assert cell.value == pytest.approx(expected.statistic, abs=1e-12)
        assert cell.p_value == pytest.approx(expected.pvalue, rel=1e-9)
        assert cell.significant == (expected.pvalue < 0.05)
        assert cell.n == present.sum()


@pytest.mark.parametrize("grouping", ["context", "system"])
def test_a_grouped_cell_is_the_mean_of_scipys_coefficient_per_group(grouping) -> None:
    human, values, context, system = _study(1)
    labels = context if grouping == "context" else system
    cells = study_cells(human, values, context, system, BenchmarkOptions("spearman", grouping, resamples=200))
    for column, cell in enumerate(cells):
        per_group = []
        for label in sorted(set(labels)):
            rows = [i for i, name in enumerate(labels) if name == label and np.isfinite(values[i, column])]
            x, y = human[rows], values[rows, column]
            if len(rows) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
                per_group.append(scipy_stats.spearmanr(x, y).statistic)
        assert cell.value == pytest.approx(np.mean(per_group), abs=1e-12)
        assert cell.n == len(per_group)
        assert cell.ci is not None
        assert cell.significant == (cell.ci[0] > 0 or cell.ci[1] < 0)


def test_system_accuracy_is_the_share_of_system_pairs_ordered_as_people_order_them() -> None:
    human, values, context, system = _study(2, systems=5)
    cells = study_cells(human, values, context, system, BenchmarkOptions("system_accuracy", resamples=200))
    names = sorted(set(system))
    for column, cell in enumerate(cells):
        present = np.isfinite(values[:, column])
        mean = {
            name: (
                human[[i for i in range(len(system)) if system[i] == name and present[i]]].mean(),
                values[[i for i in range(len(system)) if system[i] == name and present[i]], column].mean(),
            )
            for name in names
        }
        agree = [
            np.sign(mean[a][0] - mean[b][0]) == np.sign(mean[a][1] - mean[b][1])
            for a, b in itertools.combinations(names, 2)
        ]
        assert cell.value == pytest.approx(np.mean(agree))
        assert cell.n == 10
        assert cell.significant == (cell.ci is not None and cell.ci[0] > 0.5)


def test_the_trivial_acc_eq_is_the_better_of_tying_everything_and_ordering_at_random() -> None:
    # context a: scores 1, 1, 2 (1 tie of 3 pairs); context b: 3, 3 (1 tie of 1 pair): t = (1/3 + 1) / 2
    human = np.array([1.0, 1.0, 2.0, 3.0, 3.0])
    metric = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    assert trivial_accuracy(human, metric, Groups.of(["a", "a", "a", "b", "b"])) == pytest.approx(2 / 3)
    # no ties: ordering at random gets 1/2
    assert trivial_accuracy(np.array([1.0, 2.0, 3.0]), metric[:3], Groups.of(["a"] * 3)) == 0.5
    assert trivial_accuracy(np.array([1.0, 2.0]), metric[:2], Groups.of(["a", "b"])) is None


def test_a_perfect_metric_is_significant_on_every_statistic_and_noise_on_none() -> None:
    rng = np.random.default_rng(5)
    n = 120
    context = [f"c{i // 4}" for i in range(n)]
    system = [f"s{i % 4}" for i in range(n)]
    human = rng.normal(size=n) + np.arange(n) % 4
    values = np.column_stack([human, rng.normal(size=n)])
    for statistic, grouping in [
        ("pearson", "none"),
        ("kendall", "context"),
        ("spearman", "system"),
        ("reply_accuracy", "none"),
    ]:
        cells = study_cells(human, values, context, system, BenchmarkOptions(statistic, grouping, 300))
        assert [cell.significant for cell in cells] == [True, False], (statistic, grouping)


def _cell(value: float | None, note: str = "") -> BenchmarkCell:
    return BenchmarkCell(value, significant=value is not None and value > 0.5, note=note)


def test_the_table_has_means_mean_ranks_the_best_per_column_and_why_a_cell_is_missing() -> None:
    a, b, c = MetricKey("a|v1", "bleu-2"), MetricKey("b|v1", "meteor"), MetricKey("c|v1", "bleu-2")
    columns = [
        StudyColumn("one", {"a|v1": _cell(0.2), "b|v1": _cell(0.6), "c|v1": _cell(0.6)}),
        StudyColumn("two", {"a|v1": _cell(0.4), "b|v1": _cell(None, "metric is constant")}),
        StudyColumn("three", {"a|v1": _cell(0.9), "b|v1": _cell(0.1)}, {"c|v1": "no reference to score"}),
    ]
    table = benchmark_table(columns, [a, b, c], BenchmarkOptions())
    rows = {row.metric.text: row for row in table.rows}
    assert rows["a|v1"].mean == pytest.approx(0.5)
    # ranks: one: b and c tie for 1 (1.5 each), a 3; two: a 1; three: a 1, b 2
    assert rows["a|v1"].mean_rank == pytest.approx((3 + 1 + 1) / 3)
    assert rows["b|v1"].mean_rank == pytest.approx((1.5 + 2) / 2)
    assert rows["c|v1"].mean_rank == pytest.approx(1.5)
    assert rows["c|v1"].studies == 1
    assert rows["a|v1"].best == (False, False, True)  # column two has one value: nothing is best
    assert rows["b|v1"].best == (True, False, False)
    assert rows["c|v1"].best == (True, False, False)
    assert rows["b|v1"].cells[1].note == "metric is constant"
    assert rows["c|v1"].cells[1].note == NOT_SCORED
    assert rows["c|v1"].cells[2].note == "no reference to score"
    assert rows["c|v1"].best_mean
    assert rows["c|v1"].best_rank
    assert not rows["a|v1"].best_rank
    # two rows named bleu-2 read as their signatures
    assert [row.label for row in table.rows] == ["a|v1", "meteor", "c|v1"]


def test_the_formats_show_markers_best_and_reasons() -> None:
    a, b = MetricKey("a|v1", "bleu-2"), MetricKey("b|v1", "x_&_y")
    columns = [
        StudyColumn("one", {"a|v1": _cell(0.7), "b|v1": _cell(0.3)}),
        StudyColumn("two", {"a|v1": _cell(0.2)}),
        StudyColumn("three", {"a|v1": _cell(0.1), "b|v1": _cell(0.4)}),
    ]
    table = benchmark_table(columns, [a, b], BenchmarkOptions("pearson", "context"))
    latex = benchmark_latex(table)
    assert r"\toprule" in latex
    assert r"\bottomrule" in latex
    # means 0.333 and 0.350; mean ranks (1 + 1 + 2) / 3 and (2 + 1) / 2
    assert r"BLEU-2 & \textbf{0.700}$^{*}$ & 0.200 & 0.100 & 0.333 & \textbf{1.33} \\" in latex
    assert r"x\_\&\_y & 0.300 & --- & \textbf{0.400} & \textbf{0.350} & 1.50 \\" in latex
    assert "x\\_\\&\\_y on two: not scored on this study" in latex
    text = benchmark_text(table)
    assert "[0.700*]" in text
    assert "x_&_y on two: not scored on this study" in text
    document = json.loads(benchmark_json(table))
    assert document["rows"][1]["cells"][1] == {
        "study": "two",
        "value": None,
        "significant": False,
        "p_value": None,
        "ci": None,
        "n": 0,
        "note": NOT_SCORED,
        "best": False,
    }
    figure = benchmark_heatmap(table)
    assert figure is not None
    assert figure["data"][0]["z"] == [[0.7, 0.2, 0.1], [0.3, None, 0.4]]
    assert figure["data"][0]["text"][1] == ["0.300", "—", "0.400"]
    assert figure["data"][0]["customdata"][1][1] == NOT_SCORED


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"statistic": "bleu"}, "statistic"),
        ({"grouping": "turn"}, "grouping"),
        ({"statistic": "system_accuracy", "grouping": "context"}, "grouping"),
        ({"resamples": "many"}, "resamples"),
    ],
)
def test_options_name_the_field_at_fault(values, field) -> None:
    with pytest.raises(OptionError, match=f"^{field}: "):
        BenchmarkOptions.parse(values)
