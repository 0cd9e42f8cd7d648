"""The data behind the report's scatter plots, as one JSON-ready blob that static/correlation/report.js draws.

Utterance level as in RUBER's Figures 4-5 (seed 000, section 4.2): one point per response, x = the human
score plus N(0, 0.25^2) jitter, y = the metric value. System level as in seed 003's Figure 1 (section
5.1.2): one point per system, x = its mean human score, y = its mean metric value.

Response texts and system names are stored once (not once per metric) and the browser builds the traces,
so 500 responses x 10 metrics stays a small page. The blob goes through Django's ``json_script``, which
escapes it for the HTML context; report.js escapes texts again for Plotly's hover labels.
"""

from __future__ import annotations

from typing import Any

from correlation.services import CorrelationReport
from correlation.stats import CorrelationResult, jitter

HOVER_TEXT_LIMIT = 300  # characters of a response shown on hover; the full text is on the study page
JITTER_SD = 0.25
JITTER_SEED = 20170211  # fixed so the cloud of points does not move between page loads


def report_plot_data(report: CorrelationReport, *, question: str) -> dict[str, Any]:
    """Points and per-metric values for one question of ``report``."""
    human = report.human_scores[question]
    item_ids = sorted(human)
    systems = sorted({report.responses[i].system for i in item_ids})
    system_index = {name: index for index, name in enumerate(systems)}
    raw_human = [human[i] for i in item_ids]
    return {
        "question": question,
        "systems": systems,
        "items": {
            "text": [report.responses[i].text[:HOVER_TEXT_LIMIT] for i in item_ids],
            "system": [system_index[report.responses[i].system] for i in item_ids],
            "human": [_compact(value) for value in raw_human],
            "x": [_compact(value) for value in jitter(raw_human, sd=JITTER_SD, seed=JITTER_SEED)],
        },
        "metrics": [
            {
                "signature": row.signature,
                "metric": row.metric,
                "references": row.references,
                **_coefficients(row.pearson, row.spearman),
                "values": [
                    _compact_or_none(report.metric_values.get(row.signature_id, {}).get(i)) for i in item_ids
                ],
            }
            for row in report.rows
            if row.question == question
        ],
        "system_level": [
            {
                "signature": row.signature,
                "metric": row.metric,
                "references": row.references,
                **_coefficients(row.pearson, row.spearman),
                "systems": [s.system for s in row.systems],
                "human": [_compact(s.human_mean) for s in row.systems],
                "values": [_compact(s.metric_mean) for s in row.systems],
                "sizes": [s.n for s in row.systems],
            }
            for row in report.system_rows
            if row.question == question
        ],
    }


def _coefficients(pearson: CorrelationResult, spearman: CorrelationResult) -> dict[str, float | None]:
    return {"pearson": pearson.coefficient, "spearman": spearman.coefficient}


def _compact(value: float) -> float:
    # Six significant digits are plenty on screen and keep the blob small.
    return float(f"{value:.6g}")


def _compact_or_none(value: float | None) -> float | None:
    return None if value is None else _compact(value)
