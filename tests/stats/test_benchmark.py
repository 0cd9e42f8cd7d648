"""stats/benchmark: each cell against the statistic computed another way (scipy per group, loops over system
pairs, counts by hand), the table's mean, mean rank and best against hand values, the formats' markers."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.benchmark.cells import BenchmarkCell, study_cells
from stats.benchmark.figure import benchmark_heatmap
from stats.benchmark.formats import benchmark_json, benchmark_latex, benchmark_text
from stats.benchmark.judges import benchmark_keys
from stats.benchmark.options import BenchmarkOptions
from stats.benchmark.table import NOT_SCORED, MetricKey, StudyColumn, benchmark_table
from stats.latex import latex_escape
from stats.meta import Groups, trivial_accuracy
from stats.report.types import OptionError
from tests.latex_compile import compiled_log


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
    """Only metrics on every study are ranked against each other and can be best (a metric scored on
    1 of 2 studies took the best mean rank with its one rank of 1.00); the others are ranked apart, after."""
    a = MetricKey("bleu-2|impl:nltk|refs:single", "bleu-2")
    b = MetricKey("meteor|refs:single", "meteor")
    c = MetricKey("bleu-2|impl:nlg-eval|refs:single", "bleu-2")
    d = MetricKey("rouge-l|refs:single", "rouge-l")
    columns = [
        StudyColumn("one", {a.text: _cell(0.2), b.text: _cell(0.6), c.text: _cell(0.9), d.text: _cell(0.3)}),
        StudyColumn(
            "two", {a.text: _cell(0.4), b.text: _cell(None, "metric is constant"), d.text: _cell(0.1)}
        ),
        StudyColumn(
            "three",
            {a.text: _cell(0.9), b.text: _cell(0.1), d.text: _cell(0.5)},
            {c.text: "no reference to score"},
        ),
    ]
    table = benchmark_table(columns, [a, b, c, d], BenchmarkOptions())
    rows = {row.metric.text: row for row in table.rows}
    assert rows[a.text].mean == pytest.approx(0.5)
    assert [row.complete for row in table.rows] == [True, True, False, False]  # complete ones first
    assert [row.metric for row in table.rows] == [a, d, b, c]
    # a and d are on every study, ranked between themselves: one: d 1, a 2; two: a 1, d 2; three: a 1, d 2
    assert rows[a.text].mean_rank == pytest.approx((2 + 1 + 1) / 3)
    assert rows[d.text].mean_rank == pytest.approx((1 + 2 + 2) / 3)
    # b and c apart, each among every value of its studies: b in one 2nd (of 4), in three 3rd; c in one 1st
    assert rows[b.text].mean_rank == pytest.approx((2 + 3) / 2)
    assert rows[c.text].mean_rank == pytest.approx(1.0)
    assert rows[c.text].studies == 1
    # best of a column among the complete rows only: c's 0.9 on study one is not bold, d's 0.3 is
    assert rows[d.text].best == (True, False, False)
    assert rows[a.text].best == (False, True, True)
    assert rows[c.text].best == (False, False, False)
    assert rows[b.text].best == (False, False, False)
    assert rows[b.text].cells[1].note == "metric is constant"
    assert rows[c.text].cells[1].note == NOT_SCORED
    assert rows[c.text].cells[2].note == "no reference to score"
    assert rows[a.text].best_mean
    assert rows[a.text].best_rank
    assert not rows[c.text].best_mean
    assert not rows[c.text].best_rank
    # the two bleu-2 rows read as their display names: the tool tells them apart
    assert {row.label for row in table.rows} == {"bleu-2 (nltk)", "bleu-2 (nlg-eval)", "meteor", "rouge-l"}


def test_the_formats_show_markers_best_and_reasons() -> None:
    a, b, c = MetricKey("a|v1", "bleu-2"), MetricKey("b|v1", "x_&_y"), MetricKey("c|v1", "meteor")
    columns = [
        StudyColumn("one", {"a|v1": _cell(0.7), "b|v1": _cell(0.3), "c|v1": _cell(0.2)}),
        StudyColumn("two", {"a|v1": _cell(0.2), "c|v1": _cell(0.5)}),
        StudyColumn("three", {"a|v1": _cell(0.1), "b|v1": _cell(0.4), "c|v1": _cell(0.6)}),
    ]
    table = benchmark_table(columns, [a, b, c], BenchmarkOptions("pearson", "context"))
    latex = benchmark_latex(table)
    assert r"\toprule" in latex
    assert r"\bottomrule" in latex
    # a and c on every study: means 0.333 and 0.433, mean ranks (1 + 2 + 2) / 3 and (2 + 1 + 1) / 3; b apart
    assert r"BLEU-2 & \textbf{0.700}$^{*}$ & 0.200 & 0.100 & 0.333 & 1.67 \\" in latex
    assert (
        r"METEOR & 0.200 & \textbf{0.500} & \textbf{0.600}$^{*}$ & \textbf{0.433} & \textbf{1.33} \\" in latex
    )
    # b on 2 of 3 studies: after a midrule, marked, never bold; ranked among every value of its studies (2nd, 2nd)
    assert r"x\_\&\_y$^{\dagger}$ & 0.300 & --- & 0.400 & 0.350 & 2.00 \\" in latex
    assert latex.index(r"\midrule", latex.index("METEOR")) < latex.index(r"x\_\&\_y$^{\dagger}$")
    assert r"$^{\dagger}$ on fewer studies than the table" in latex
    assert "x\\_\\&\\_y on two: not scored on this study" in latex
    text = benchmark_text(table)
    assert "[0.700*]" in text
    assert "x_&_y on two: not scored on this study" in text
    document = json.loads(benchmark_json(table))
    assert document["rows"][2]["cells"][1] == {
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
    assert figure["data"][0]["z"] == [[0.7, 0.2, 0.1], [0.2, 0.5, 0.6], [0.3, None, 0.4]]
    assert figure["data"][0]["text"][2] == ["0.300", "—", "0.400"]
    assert figure["data"][0]["customdata"][2][1] == NOT_SCORED


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


LONG_STUDIES = [
    "GRADE DailyDialog transformer ranker",
    "GRADE ConvAI2 transformer generator",
    "Zhao et al. DailyDialog retrieval annotations",
    "Empathetic Dialogues pilot with six raters",
    "USR TopicalChat Mehri and Eskenazi turn level",
    "fed_dialogpt_large_turn_level_interesting",  # one word: it cannot wrap at a space
]
LONG_METRICS = [
    *(MetricKey(f"bleu-{n}|impl:{tool}", f"bleu-{n}") for n in (1, 2, 3, 4) for tool in ("nltk", "nlg-eval")),
    MetricKey("meteor|refs:single", "meteor"),
    MetricKey("meteor|refs:multi", "meteor"),
    *(
        MetricKey(f"{name}|v1", name)
        for name in (
            "rouge-l",
            "embedding-average-word2vec-google-news-300",
            "vector-extrema-glove-840b-300d",
            "greedy-matching-fasttext-crawl-300d-2m",
            "bert-score-f1-roberta-large-layer17",
            "bleurt-20-d12-distilled-checkpoint",
            "usr-dialogpt-retrieval-masked-language-model",
            "ruber-hybrid-arithmetic-mean-unreferenced",
            "grade-transformer-ranker-convai2",
            "fed-dialogpt-large-turn-level-interesting",
        )
    ),
]


def _wide_table(studies: int = 6, statistic: str = "pearson"):
    """20 metrics of long display names over ``studies`` long-named studies; the last metric misses the
    first study (a dagger row) and one cell has no value (a reason in the caption)."""
    columns = []
    for j, study in enumerate(LONG_STUDIES[:studies]):
        cells = {
            key.text: _cell(None, "metric is constant")
            if (i, j) == (3, 1)
            else _cell((i * 7 + j * 3) % 19 / 19)
            for i, key in enumerate(LONG_METRICS)
            if not (j == 0 and i == len(LONG_METRICS) - 1)
        }
        columns.append(StudyColumn(study, cells))
    return benchmark_table(columns, LONG_METRICS, BenchmarkOptions(statistic, "context"))


def _compiled_log(latex: str, tmp_path) -> str:
    """pdflatex's log of ``latex`` in an article with the packages its first line says it needs."""
    needs = latex.splitlines()[0]
    assert needs.startswith("% needs ")
    packages = re.findall(r"\\usepackage(?:\[[^]]*\])?\{[^}]+\}", needs)
    assert r"\usepackage{booktabs}" in packages
    preamble = "\\documentclass{article}\n" + "\n".join(packages)
    return compiled_log(f"{preamble}\n\\begin{{document}}\n{latex}\\end{{document}}\n", tmp_path, "benchmark")


def test_the_latex_of_many_long_named_studies_fits_an_article(tmp_path) -> None:
    """six long study names and 20 long metric names made the table 636 pt wider than an article's
    text. Compiled with the packages its first line says it needs, nothing sticks out of the text width."""
    latex = benchmark_latex(_wide_table())
    log = _compiled_log(latex, tmp_path)
    overfull = [line for line in log.splitlines() if "Overfull \\hbox" in line]
    assert overfull == [], overfull
    # every study named in full (its column headed by a key, the caption saying which study it is)
    for study in LONG_STUDIES:
        assert latex_escape(study) in latex, study


@pytest.mark.parametrize(("statistic", "letter"), [("spearman", r"\rho"), ("kendall", r"\tau")])
def test_the_latex_of_a_rank_correlation_compiles(tmp_path, statistic, letter) -> None:
    """The caption names the statistic ("Spearman's ρ"): a Greek letter in text stopped pdflatex ("Unicode
    character ρ not set up for use with LaTeX"); it is set in math."""
    latex = benchmark_latex(_wide_table(studies=2, statistic=statistic))
    log = _compiled_log(latex, tmp_path)
    assert "Unicode character" not in log
    assert rf"\ensuremath{{{letter}}}" in latex


def test_the_heat_map_is_sized_by_its_rows_studies_and_longest_label() -> None:
    """a plot stretched to the page drew two studies as two thin columns, cut its metric labels
    on the left and its footnote on the right. The figure's height follows its rows, its width its studies,
    its left margin its longest label; study names wrap over their columns, the footnote over the figure."""
    wide, narrow = benchmark_heatmap(_wide_table(6)), benchmark_heatmap(_wide_table(2))
    half = benchmark_heatmap(
        benchmark_table(
            [
                StudyColumn(study, {key.text: _cell(0.4) for key in LONG_METRICS})
                for study in LONG_STUDIES[:2]
            ],
            LONG_METRICS[:10],
            BenchmarkOptions("spearman", "context"),
        )
    )
    assert wide is not None
    assert narrow is not None
    assert half is not None
    # 4 more studies make it wider by 4 equal columns; 10 more rows make it taller by 10 equal rows
    per_study = (wide["layout"]["width"] - narrow["layout"]["width"]) / 4
    assert 90 <= per_study <= 160
    per_row = (narrow["layout"]["height"] - half["layout"]["height"]) / 10
    assert 20 <= per_row <= 40
    longest = max(len(key.text.split("|")[0]) for key in LONG_METRICS)  # 44 characters
    assert wide["layout"]["margin"]["l"] >= 6 * longest
    axis = wide["layout"]["xaxis"]
    assert axis["tickangle"] == 0
    assert axis["tickvals"] == list(LONG_STUDIES)  # the hover label names each study in full
    for text in axis["ticktext"]:
        assert all(len(line) <= 16 for line in text.split("<br>")), text
    # the footnote says what the star means for this table (a bootstrap interval here, not a p-value) and
    # wraps: no line longer than the figure holds at 11 px
    (note,) = narrow["layout"]["annotations"]
    assert note["text"].startswith("* the 95% bootstrap interval over groups excludes 0")
    assert all(len(line) * 7 <= narrow["layout"]["width"] for line in note["text"].split("<br>"))


def test_a_judges_identity_leaves_out_its_study_and_keeps_two_of_one_study_apart() -> None:
    def judge(key: str, question: str, template: str = "g-eval@3f2a91c0") -> MetricKey:
        text = f"llm-judge:{key * 16}|backend:local|model:m|question:{question}|read:expectation|scale:1-5|"
        return MetricKey(f"{text}template:{template}|version:1", f"llm-judge:{key * 16}")

    own, other = judge("a", "quality@11111111"), judge("b", "fluency@22222222")
    bleu = MetricKey("bleu-2|refs:single|version:1", "bleu-2")
    keys = benchmark_keys([own, other, bleu], "quality")
    assert keys[own.text] == MetricKey(
        "llm-judge|backend:local|model:m|read:expectation|template:g-eval@3f2a91c0|version:1", "llm-judge"
    )
    assert keys[other.text].text == (
        "llm-judge|asked:fluency|backend:local|model:m|read:expectation|template:g-eval@3f2a91c0|version:1"
    )
    assert keys[bleu.text] == bleu
    # the study's question text changed between two runs: two judges that would read as one keep their hashes
    edited = judge("c", "quality@33333333")
    apart = benchmark_keys([own, edited], "quality")
    assert "asked:quality@11111111" in apart[own.text].text
    assert "asked:quality@33333333" in apart[edited.text].text
