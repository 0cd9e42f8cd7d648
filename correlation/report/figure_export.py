"""The report's figures as PNG and SVG files, rendered by plotly's kaleido in a headless Chromium.

The figures themselves are plotly dicts built in stats/figures/ (pure Python, no browser); here they are
drawn as a file shows them (:func:`stats.figures.report.figure_for_export`, at its ``EXPORT_WIDTH``). The
page's image download and the reproducibility bundle render through this module, so both give the same
images. A browser that cannot start or render is a :class:`FigureExportError`, which the page answers with
a 503 rather than a blank failure.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from stats.figures.report import EXPORT_WIDTH, figure_for_export

IMAGE_FORMATS = ("png", "svg")
SYSTEM_CHROMIUM = "/usr/bin/chromium"
RENDER_TIMEOUT_S = 90.0  # per figure, kaleido's own default


class FigureExportError(RuntimeError):
    """The browser behind kaleido could not start or could not render a figure."""


def figure_image(figure: Mapping[str, Any], fmt: str, *, scale: float = 1.0) -> bytes:
    """``figure`` as PNG or SVG bytes (one browser start each time: use :func:`figure_images` for
    several)."""
    return figure_images([figure], fmt, scale=scale)[0]


def figure_images(figures: Sequence[Mapping[str, Any]], fmt: str, *, scale: float = 1.0) -> list[bytes]:
    """Every figure as PNG or SVG bytes (as :func:`figure_for_export` has it), rendered in one headless
    Chromium session."""
    if fmt not in IMAGE_FORMATS:
        raise ValueError(f'image format "{fmt}" is not one of {", ".join(IMAGE_FORMATS)}')
    if not figures:
        return []
    figures = [figure_for_export(figure) for figure in figures]
    # asyncio.run in a thread of its own: the caller may already run an event loop (an ASGI view,
    # Playwright's sync API in tests), and asyncio.run refuses to start inside one.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kaleido") as pool:
        return pool.submit(asyncio.run, _render(list(figures), fmt, scale)).result()


def browser_path() -> str | None:
    """``BROWSER_PATH`` when set (choreographer's own variable), else Debian's Chromium when installed;
    None lets choreographer search PATH."""
    configured = os.environ.get("BROWSER_PATH")
    if configured:
        return configured
    return SYSTEM_CHROMIUM if Path(SYSTEM_CHROMIUM).is_file() else None


async def _render(figures: list[Mapping[str, Any]], fmt: str, scale: float) -> list[bytes]:
    import kaleido  # heavy (starts nothing by itself); only exports need it
    from kaleido.errors import KaleidoError

    # choreographer starts Chromium headless with --no-sandbox unless enable_sandbox=True, which is what
    # running as root needs; mathjax=False keeps the page from fetching MathJax from a CDN (offline), and
    # plotly.js comes from the installed plotly package.
    options: dict[str, Any] = {"mathjax": False, "timeout": RENDER_TIMEOUT_S}
    path = browser_path()
    if path:
        options["path"] = path
    try:
        async with kaleido.Kaleido(**options) as browser:
            images = []
            for figure in figures:
                layout = figure.get("layout") or {}
                opts = {"format": fmt, "scale": scale, "width": layout.get("width") or EXPORT_WIDTH}
                images.append(await browser.calc_fig(dict(figure), opts=opts))
            return images
    except (
        OSError,
        RuntimeError,
        TimeoutError,
        KaleidoError,
    ) as error:  # ChromeNotFoundError: a RuntimeError
        raise FigureExportError(f"figure export through kaleido failed: {error}") from error
