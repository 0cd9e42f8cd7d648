"""What the report's figures look like in headless Chromium: the references curve keeps the
plot's height with its legend below, in its own room, on the page and in the export (which has no
"(click to show)"); system labels stay inside the plot, clear of the tick labels; the agreement tab shows
a pair's scatter beside the heat map from the start, and a number in each heat-map cell."""

from __future__ import annotations

import json
from typing import Any

import pytest

from annotation.importers import ImportFile
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from scoring.services import scoring_run_create, scoring_run_execute
from stats.figures.report import CLICK_TO_SHOW, EXPORT_WIDTH, figure_for_export
from tests.browser_fixtures import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SYSTEMS = {"dualencoder_train": 0, "hredf": 1, "seq2seqf": 2}  # mean ratings rise in this order
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "in", "park", "red", "big"]


def _study(owner: Any) -> Any:
    study = study_create(owner=owner, name="figures", ratings_per_item=3)
    records = []
    for index in range(8):
        references = [
            " ".join(WORDS[(index + shift + n) % len(WORDS)] for n in range(5)) for shift in range(3)
        ]
        for system, level in SYSTEMS.items():
            rating = min(2, max(0, level + (index % 3) - 1))
            records.append(
                {
                    "context": [f"what happened {index} ?"],
                    "response": references[level % 3] if (index + level) % 2 else f"no idea {index} {system}",
                    "system": system,
                    "references": references,
                    "ratings": {"appropriateness": [rating, max(0, rating - index % 2), rating]},
                    "annotators": ["ann-a", "ann-b", "ann-c"],
                }
            )
    data = "".join(json.dumps(record) + "\n" for record in records).encode()
    study_import(study=study, format="jsonl", files=[ImportFile(name="figures.jsonl", data=data)])
    run = scoring_run_create(study=study, metrics=["bleu-2"], references="multi", enqueue=False)
    assert scoring_run_execute(run_id=run.pk).status == "succeeded"
    return study


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def _legend_below_a_full_height_plot(page: Any, root: str) -> None:
    plot, title, legend, svg = (
        _box(page, f"{root} .nsewdrag"),
        _box(page, f"{root} .g-xtitle"),
        _box(page, f"{root} .legend"),
        _box(page, f"{root} .main-svg"),
    )
    assert plot["height"] >= 250  # not a thin band
    assert legend["y"] >= title["y"] + title["height"]  # under the x axis title, not over it
    assert legend["y"] + legend["height"] <= svg["y"] + svg["height"]  # not cut off


def test_figures_keep_their_plot_their_labels_and_their_legend_in_view(page, live_server, researcher) -> None:
    study = _study(researcher)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/reports/{study.pk}/#tab-references")
    curve = 'div.plot[data-figure="references-curve"]'
    page.locator(f"{curve} .legend").wait_for()
    _legend_below_a_full_height_plot(page, curve)

    # The export: the same figure dict, as kaleido renders it (plotly.js at the export width).
    payload = page.request.get(f"{live_server.url}/reports/{study.pk}/figures.json").json()
    [figure] = [spec["figure"] for spec in payload["figures"] if spec["name"] == "references-curve"]
    page.evaluate(
        """([figure, width]) => {
          const div = document.createElement("div");
          div.id = "exported";
          document.body.prepend(div);
          return Plotly.newPlot(div, figure.data, {...figure.layout, width: width});
        }""",
        [figure_for_export(figure), EXPORT_WIDTH],
    )
    _legend_below_a_full_height_plot(page, "#exported")
    assert CLICK_TO_SHOW not in page.locator("#exported").inner_text()

    page.locator('#report-tabs a[data-tab="system"]').click()
    system = 'div.plot[data-figure="system-bleu-2-multi"]'
    page.locator(f"{system} .textpoint text").first.wait_for()
    # Drawn while its tab was hidden, the plot is resized when the tab shows: measure it after that.
    page.wait_for_function(
        "div => Math.abs(div.querySelector('.main-svg').getBoundingClientRect().width - div.clientWidth) < 2",
        arg=page.locator(system).element_handle(),
    )
    plot = _box(page, f"{system} .nsewdrag")
    ticks_right = max(box["x"] + box["width"] for box in _boxes(page, f"{system} .ytick text"))
    for label in _boxes(page, f"{system} .textpoint text"):
        assert label["x"] >= max(plot["x"], ticks_right)  # neither clipped nor over the tick labels
        assert label["x"] + label["width"] <= plot["x"] + plot["width"] + 1
    assert "dualencoder_train" in page.locator(system).inner_text()

    page.locator('#report-tabs a[data-tab="agreement"]').click()
    page.locator("#pair-plot .main-svg").first.wait_for()  # drawn without a click
    assert " vs " in (page.locator("#pair-plot .gtitle").text_content() or "")
    cells = page.locator('div.plot[data-figure="agreement-heatmap"] .heatmaplayer text').all_text_contents()
    assert len(cells) == 9
    assert all(text.replace(".", "").replace("−", "").isdigit() for text in cells)
    assert errors == []


def _boxes(page: Any, selector: str) -> list[dict[str, float]]:
    return [box for box in (node.bounding_box() for node in page.locator(selector).all()) if box is not None]
