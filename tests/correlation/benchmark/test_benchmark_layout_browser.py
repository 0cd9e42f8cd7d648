"""The benchmark page's layout in headless Chromium at laptop and desktop sizes (1280x800, 1440x900): with long
study names and 20 metrics of long display names, the document never scrolls sideways, the table's study
headers and metric names are whole (a shortened study name keeps its full text as its title), and the heat
map keeps its tick labels and footnote inside its box, growing with its rows."""

from __future__ import annotations

from typing import Any

import pytest

from stats.display_names import display_names
from tests.browser_fixtures import log_in
from tests.correlation.benchmark.builders import benchmark_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STUDIES = [
    "GRADE DailyDialog transformer ranker",
    "GRADE ConvAI2 transformer generator with persona",
    "Zhao et al. 2020 DailyDialog retrieval annotations",
    "Empathetic Dialogues pilot with six raters",
    "USR TopicalChat Mehri and Eskenazi 2020 turn level",
    "fed_dialogpt_large_turn_level_interesting_v2",  # one long word: it cannot wrap at a space
]
# 20 metrics whose display names are long: the same metric by two tools reads "bleu-1 (nlg-eval)", and
# trained or embedding metrics have long names of their own.
METRICS = [
    *(f"bleu-{n}|impl:{tool}|version:test" for n in (1, 2, 3, 4) for tool in ("nltk", "nlg-eval")),
    "meteor|refs:single|version:test",
    "meteor|refs:multi|version:test",
    "rouge-l|version:test",
    "embedding-average-word2vec-google-news-300|version:test",
    "vector-extrema-glove-840b-300d|version:test",
    "greedy-matching-fasttext-crawl-300d-2m|version:test",
    "bert-score-f1-roberta-large-layer17|version:test",
    "bleurt-20-d12-distilled-checkpoint|version:test",
    "usr-dialogpt-retrieval-masked-language-model|version:test",
    "ruber-hybrid-arithmetic-mean-unreferenced|version:test",
    "grade-transformer-ranker-convai2|version:test",
    "fed-dialogpt-large-turn-level-interesting|version:test",
]
FEW = ["rouge-l", "meteor"]  # 3 rows, for the heat map's height against the 20 rows


def _metric(k: int):
    return lambda quality, index: quality * (k % 5 + 1) / 5 + ((index * (k + 7)) % 13) / 13


def _studies(researcher, count: int) -> list[Any]:
    metrics = {text: _metric(k) for k, text in enumerate(METRICS)}
    return [
        benchmark_study(researcher, name, metrics, seed=k, contexts=5)
        for k, name in enumerate(STUDIES[:count])
    ]


# Geometry read in the page: each element's box, its text's extent (scrollWidth/scrollHeight against the
# client box: over means the text is cut or spills), and what it names in full (its title).
TABLE_GEOMETRY = """() => {
  const root = document.documentElement;
  const table = document.getElementById("benchmark-table");
  const frame = table.parentElement;
  const cell = (el) => {
    const words = document.createRange();
    words.selectNodeContents(el);
    const text = words.getBoundingClientRect();
    const box = el.getBoundingClientRect();
    return {
      text: el.innerText.replace(/\\s+/g, " ").trim(),
      title: el.getAttribute("title") || "",
      overflowX: el.scrollWidth - el.clientWidth,
      overflowY: el.scrollHeight - el.clientHeight,
      textOutside: Math.max(box.left - text.left, text.right - box.right, box.top - text.top,
                            text.bottom - box.bottom),
      lines: Math.round(text.height / parseFloat(getComputedStyle(el).lineHeight)),
    };
  };
  return {
    documentWidth: root.scrollWidth,
    windowWidth: root.clientWidth,
    tableWidth: table.getBoundingClientRect().width,
    frameWidth: frame.clientWidth,
    frameOverflowX: getComputedStyle(frame).overflowX,
    cardRight: document.getElementById("benchmark-result").getBoundingClientRect().right,
    // the study headers: after the metric's, before the mean, mean rank and studies
    studies: [...table.querySelectorAll("thead th")].slice(1, -3).map(cell),
    metrics: [...table.querySelectorAll("tbody td.metric-name")].map(cell),
  };
}"""

PLOT_GEOMETRY = """() => {
  const plot = document.getElementById("benchmark-heatmap");
  const svg = plot.querySelector(".main-svg").getBoundingClientRect();
  const box = (el) => { const r = el.getBoundingClientRect();
    return {text: el.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const area = plot.querySelector(".nsewdrag").getBoundingClientRect();
  return {
    svg: {left: svg.left, right: svg.right, top: svg.top, bottom: svg.bottom, width: svg.width,
          height: svg.height},
    plotWidth: area.width,
    plotHeight: area.height,
    yticks: [...plot.querySelectorAll(".ytick text")].map(box),
    xticks: [...plot.querySelectorAll(".xtick text")].map(box),
    notes: [...plot.querySelectorAll(".annotation-text")].map(box),
  };
}"""


def _open(page, live_server, studies, metrics: list[str] | None = None) -> None:
    query = "&".join(f"studies={study.pk}" for study in studies) + "&statistic=spearman"
    if metrics:
        query += "&metrics=" + ",".join(metrics)
    page.goto(f"{live_server.url}/reports/benchmark/?{query}")
    page.wait_for_selector("#benchmark-heatmap[data-ready='1'] .main-svg")


def _inside(box: dict[str, Any], svg: dict[str, Any], slack: float = 1.0) -> bool:
    return (
        box["left"] >= svg["left"] - slack
        and box["right"] <= svg["right"] + slack
        and box["top"] >= svg["top"] - slack
        and box["bottom"] <= svg["bottom"] + slack
    )


@pytest.mark.parametrize("count", [2, 6])
@pytest.mark.parametrize(("width", "height"), [(1280, 800), (1440, 900)])
def test_long_study_names_and_many_metrics_fit_the_window(
    page, live_server, researcher, width, height, count
) -> None:
    studies = _studies(researcher, count)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size({"width": width, "height": height})
    log_in(page, live_server, researcher)
    _open(page, live_server, studies)

    table = page.evaluate(TABLE_GEOMETRY)
    # the page never scrolls sideways; the table fits its card, and would scroll inside it, not the page
    assert table["documentWidth"] <= table["windowWidth"], table
    assert table["cardRight"] <= table["windowWidth"], table
    assert table["frameOverflowX"] in ("auto", "scroll"), table
    assert table["tableWidth"] <= table["frameWidth"] + 1, table
    # each study header whole, in at most three lines, its full name in view or as its title
    assert len(table["studies"]) == count
    for name, header in zip(STUDIES, table["studies"], strict=False):
        assert header["overflowX"] <= 1, header
        assert header["overflowY"] <= 1, header
        assert header["textOutside"] <= 1, header
        assert name in (header["text"], header["title"]), header
        assert header["lines"] <= 3, header
    # each metric name whole, in at most three lines (not squeezed into a column a few letters wide)
    names = display_names([(text, text.split("|")[0]) for text in METRICS])
    assert sorted(cell["text"] for cell in table["metrics"]) == sorted(name.text for name in names.values())
    for cell in table["metrics"]:
        assert cell["overflowX"] <= 1, cell
        assert cell["overflowY"] <= 1, cell
        assert cell["textOutside"] <= 1, cell
        assert cell["lines"] <= 3, cell

    plot = page.evaluate(PLOT_GEOMETRY)
    svg = plot["svg"]
    assert svg["right"] <= table["windowWidth"], svg
    # every metric and study labelled (plotly drops tick labels that do not fit), each label in the box
    assert len(plot["yticks"]) == len(METRICS), [tick["text"] for tick in plot["yticks"]]
    assert len(plot["xticks"]) == count, [tick["text"] for tick in plot["xticks"]]
    for tick in plot["yticks"] + plot["xticks"]:
        assert _inside(tick, svg), (tick, svg)
    # the footnote whole, in the box
    (note,) = plot["notes"]
    assert note["text"].endswith("(hover for the reason)"), note
    assert _inside(note, svg), (note, svg)
    # columns and rows wide and tall enough to print a value in each cell
    assert plot["plotWidth"] / count >= 70, plot
    assert plot["plotHeight"] / len(METRICS) >= 20, plot
    # the width follows the studies: two studies do not stretch across the page
    assert plot["plotWidth"] <= count * 200, plot

    # the heat map's height follows its rows: 3 rows make a lower plot than 20
    _open(page, live_server, studies, FEW)
    few = page.evaluate(PLOT_GEOMETRY)
    assert len(few["yticks"]) == 3
    rows_height = plot["plotHeight"] - few["plotHeight"]
    assert rows_height >= 17 * 20, (plot["plotHeight"], few["plotHeight"])
    assert svg["height"] - few["svg"]["height"] >= 17 * 20
    for tick in few["yticks"] + few["xticks"] + few["notes"]:
        assert _inside(tick, few["svg"]), (tick, few["svg"])
    assert errors == []
