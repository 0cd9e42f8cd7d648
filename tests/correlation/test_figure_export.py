"""The report's figures as PNG and SVG files (correlation/report/figure_export.py): plotly's kaleido with
Debian's Chromium, from the figure dicts of stats/figures/ built for a synthetic study (no database)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from xml.etree import ElementTree

import pytest

from correlation.report import figure_export
from correlation.report.figure_export import FigureExportError, figure_image, figure_images
from stats.figures.layout import HEIGHT
from stats.figures.report import EXPORT_WIDTH, FigureSpec, report_figures
from stats.report.builder import build_report
from stats.report.types import ReportOptions
from tests.stats.test_figures import EVIL_SYSTEM, QUESTION, synthetic_inputs


@pytest.fixture(scope="module")
def specs() -> dict[str, FigureSpec]:
    document, plots = build_report(synthetic_inputs(), ReportOptions(resamples=200))
    return {spec.name: spec for spec in report_figures(document, plots, QUESTION, "My study")}


def test_an_unknown_image_format_is_refused_before_any_browser_starts(specs) -> None:
    figure = specs["quantiles"].figure
    with pytest.raises(ValueError, match="png, svg"):
        figure_image(figure, "jpg")
    with pytest.raises(ValueError, match="png, svg"):
        figure_images([figure], "pdf")
    assert figure_images([], "png") == []


def test_a_missing_browser_is_an_export_error_naming_it(specs, monkeypatch) -> None:
    monkeypatch.setenv("BROWSER_PATH", "/nonexistent/chromium")
    with pytest.raises(FigureExportError, match="/nonexistent/chromium"):
        figure_image(specs["quantiles"].figure, "png")


def test_browser_path_prefers_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("BROWSER_PATH", "/opt/chrome/chrome")
    assert figure_export.browser_path() == "/opt/chrome/chrome"
    monkeypatch.delenv("BROWSER_PATH")
    assert figure_export.browser_path() in (figure_export.SYSTEM_CHROMIUM, None)


@pytest.mark.browser
def test_a_figure_exports_as_png_through_the_system_chromium(specs) -> None:
    figure = specs["scatter-bleu-2-single"].figure
    image = figure_image(figure, "png")
    assert image.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(image[16:20], "big"), int.from_bytes(image[20:24], "big")
    # HEIGHT, and the room of its legend of systems under the plot
    assert figure["layout"]["height"] > HEIGHT
    assert (width, height) == (EXPORT_WIDTH, figure["layout"]["height"])


@pytest.mark.browser
def test_figures_export_as_svg_in_one_session_even_inside_a_running_event_loop(specs) -> None:
    names = ("metric-comparisons", "agreement-heatmap", "figure-4b", "system-bleu-2-single")
    chosen = [specs[name].figure for name in names]

    async def from_a_coroutine() -> list[bytes]:
        return figure_images(chosen, "svg")  # a sync caller under a running loop (ASGI, Playwright)

    # The coroutine runs on a loop of its own thread: the test session's main thread may already hold one
    # (Playwright's sync API in the browser tests), where asyncio.run itself would refuse to start.
    with ThreadPoolExecutor(max_workers=1) as pool:
        images = pool.submit(asyncio.run, from_a_coroutine()).result()
    assert len(images) == len(names)
    for image in images:
        assert image.startswith(b"<svg")
    assert b"Williams" in images[0]  # each figure's own text, in the order asked
    assert b"rater-0" in images[1]
    assert b"flatters human agreement" in images[2]
    shown = ElementTree.fromstring(images[3])  # the system's name is text on the image, not an element
    assert EVIL_SYSTEM in ["".join(element.itertext()) for element in shown.iter()]
    assert not [element for element in shown.iter() if element.tag.endswith("img")]
