"""The reproducibility bundle of a report: one zip that holds what a paper's tables came from.

    README.txt              what is here and how to check it
    manifest.json           study, data version, code version, report options, counts, time, SHA-256 of
                            every file
    report.json             the report document (every section, as the API returns it)
    tables.tex              the LaTeX tables (stats/latex/)
    tables/<section>.csv    every section as CSV
    inputs/human_scores.csv the human score of every reply per question, as the report used it
    inputs/metric_scores.csv every metric value with its full signature, and whether its reply was excluded
    inputs/ratings.csv      every rating, its rater, whether the report counted it and whether its reply
                            was excluded by the researcher (correlation/bundle/inputs.py)
    figures/<name>.png|svg  every figure of every question (plotly, rendered by kaleido)
    recompute.py            recomputes the correlation rows from inputs/ with scipy alone and compares

The manifest and the README state how many replies, ratings, annotators and metric values the files hold
and how many of them the report used: replies excluded by adjudication are in the files, marked, and
counted apart, never silently dropped.

CSV files are formula-safe (kernel/csv_cells.py); recompute.py drops the leading ' of text cells.
"""

from __future__ import annotations

import hashlib
import io
import json
import textwrap
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from annotation.models import Study
from correlation.bundle.inputs import bundle_inputs, counts_text
from correlation.models import ReportSnapshot
from stats.report.document import document_as_json, report_document_from_json
from stats.report.document_types import ReportDocument
from stats.report.plot_types import ReportPlots, report_plots_from_json

BUNDLE_FILES = Path(__file__).resolve().parent / "files"  # copied into every bundle as they are
Progress = Callable[[str, int, int], None]


def report_bundle(
    *, study: Study, snapshot: ReportSnapshot, with_figures: bool = True, progress: Progress | None = None
) -> bytes:
    """The zip of ``snapshot`` (a ready report of ``study``)."""
    from correlation.report.exports import report_tables_csv
    from stats.latex import report_latex

    document = report_document_from_json(snapshot.document)
    plots = report_plots_from_json(snapshot.plots)
    inputs = bundle_inputs(study=study, data_version=snapshot.data_version, document=document, plots=plots)
    files: dict[str, bytes] = {
        "report.json": document_as_json(document).encode("utf-8"),
        "tables.tex": report_latex(document, study_name=study.name).encode("utf-8"),
        "recompute.py": (BUNDLE_FILES / "recompute.py").read_bytes(),
    }
    files.update({name: text.encode("utf-8") for name, text in inputs.files.items()})
    for section, text in report_tables_csv(document).items():
        files[f"tables/{section}.csv"] = text.encode("utf-8")
    if with_figures:
        files.update(_figure_files(study, document, plots, progress))
    manifest = {
        "study": study.name,
        "study_id": study.pk,
        "data_version": snapshot.data_version,
        "code_version": document.get("code_version", ""),
        "options": document.get("options", {}),
        "counts": inputs.counts,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": {name: hashlib.sha256(content).hexdigest() for name, content in sorted(files.items())},
    }
    files["manifest.json"] = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    tables = sorted(name.removeprefix("tables/") for name in files if name.startswith("tables/"))
    files["README.txt"] = _readme(study, snapshot, document, inputs.counts, tables).encode("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in sorted(files.items()):
            archive.writestr(name, content)
    return buffer.getvalue()


def bundle_filename(study: Study, snapshot: ReportSnapshot) -> str:
    return f"study-{study.pk}-report-v{snapshot.data_version}.zip"


def _figure_files(
    study: Study, document: ReportDocument, plots: ReportPlots, progress: Progress | None
) -> dict[str, bytes]:
    from correlation.report.figure_export import figure_images
    from stats.figures.report import report_figures

    specs = [
        spec
        for entry in document.get("questions") or []
        for spec in report_figures(document, plots, entry["name"], study.name)
    ]
    files: dict[str, bytes] = {}
    for step, fmt in enumerate(("png", "svg")):
        if progress is not None:
            progress(f"figures ({fmt})", step, 2)
        for spec, image in zip(specs, figure_images([spec.figure for spec in specs], fmt), strict=True):
            files[f"figures/{spec.filename}.{fmt}"] = image
    return files


def _readme(
    study: Study,
    snapshot: ReportSnapshot,
    document: ReportDocument,
    counts: dict[str, Any],
    tables: list[str],
) -> str:
    options = document["options"]
    table_list = textwrap.fill(
        ", ".join(tables), width=88, initial_indent=" " * 17, subsequent_indent=" " * 17
    )
    return f"""Reproducibility bundle of the correlation report of study "{study.name}"
data version {snapshot.data_version}, code {document.get("code_version", "")}
options: rater filter {options.get("filter")}, normalisation {options.get("normalise")},
{options.get("resamples")} bootstrap resamples (seed {options.get("seed")})

{counts_text(counts)}
report.json      the whole report (rows, human rows, agreement, comparisons, system level, curves)
tables.tex       the tables as LaTeX (booktabs), ready for a paper
tables/          every section as CSV:
{table_list}
inputs/          the numbers the correlations were computed from:
                 human_scores.csv (per question and reply, after the rater filter),
                 metric_scores.csv (every metric value with its signature), ratings.csv
                 (every rating; counted=true where the report used it). Replies the researcher
                 excluded by adjudication are left out of every part of the report; their
                 ratings and metric values are here with excluded=true (and counted=false)
figures/         every figure as PNG and SVG
manifest.json    the counts above and the SHA-256 of every file

To check the correlation rows: python recompute.py   (needs scipy; exit status 0 when all agree)
Bootstrap intervals are resampled and are not recomputed by the script; their seed is above.
"""
