"""Hand-made report documents (the shape ``stats.report.builder.build_report`` returns), for the
export tests: small, with round numbers, so that an expected LaTeX table or CSV line can be written out.
Typed as the document is (stats/report/document_types.py), so a renamed key fails mypy here too."""

from __future__ import annotations

from stats.report.document_types import HumanEntry, MetricRow, ReportDocument

QUESTION = "appropriateness"
FILTER_DESCRIPTION = (
    "raters whose agreement with the others (weighted Cohen's kappa) is under 0.2 (the study's setting), "
    "and raters the researcher excluded, are left out"
)


def metric_row(
    metric: str,
    references: str,
    group: str,
    pearson: float | None,
    pearson_p: float | None,
    spearman: float | None,
    spearman_p: float | None,
    *,
    n: int = 120,
    note: str = "",
    kendall: float | None = None,
    kendall_p: float | None = None,
    question: str = QUESTION,
    signature: str | None = None,
) -> MetricRow:
    return {
        "question": question,
        "metric": metric,
        "references": references,
        "signature": signature or f"{metric}|refs:{references}|tok:en-v1|version:0.1.0",
        "group": group,
        "origin": "builtin",
        "implementation": "",
        "n": n,
        "pearson": pearson,
        "pearson_p": pearson_p,
        "pearson_ci": [None, None] if pearson is None else [pearson - 0.1, pearson + 0.1],
        "spearman": spearman,
        "spearman_p": spearman_p,
        "spearman_ci": [None, None] if spearman is None else [spearman - 0.1, spearman + 0.1],
        "kendall": kendall,
        "kendall_p": kendall_p,
        "kendall_ci": [None, None] if kendall is None else [kendall - 0.1, kendall + 0.1],
        "pearson_ci_bootstrap": [None, None] if pearson is None else [pearson - 0.12, pearson + 0.08],
        "spearman_ci_bootstrap": [None, None] if spearman is None else [spearman - 0.11, spearman + 0.09],
        "spearman_bootstrap": None if spearman is None else "exact",
        "left_out": {"no_metric_score": 120 - n},
        "note": note,
    }


def human_row(
    label: str,
    pearson: float | None,
    pearson_p: float | None,
    spearman: float | None,
    spearman_p: float | None,
    *,
    note: str = "",
    question: str = QUESTION,
) -> HumanEntry:
    return {
        "question": question,
        "label": label,
        "pearson": pearson,
        "pearson_p": pearson_p,
        "spearman": spearman,
        "spearman_p": spearman_p,
        "raters": 9,
        "pearson_rater": "rater-3" if label == "Human (Max)" else None,
        "spearman_rater": "rater-5" if label == "Human (Max)" else None,
        "note": note,
    }


def paper_document() -> ReportDocument:
    """One question, Tao et al. (2018) Table 2's numbers where they fit, rows deliberately out of block order:
    Human (Max) is above every metric (never bold); ruber-min has the largest absolute Pearson but a
    negative one (not the best); BLEU-2 is scored with one reference and with all; BLEU-4 is constant."""
    return {
        "document_version": 2,
        "study": 7,
        "study_name": "Douban retrieval",
        "data_version": 42,
        "code_version": "0.1.0+git.1a2b3c4d5e6f",
        "options": {"filter": "study", "normalise": "none", "resamples": 1000, "seed": 20180201},
        "questions": [
            {
                "name": QUESTION,
                "scale": [0, 2],
                "responses": 125,
                "human_scored": 120,
                "ratings": 360,
                "imported_means": 0,
                "gold_values": 0,
                "left_out": {"no_human_score": 5},
            }
        ],
        "filter": [
            {
                "question": QUESTION,
                "kind": "study",
                "threshold": 0.2,
                "description": FILTER_DESCRIPTION,
                "annotators_removed": 2,
                "ratings_removed": 14,
                "ratings_total": 360,
                "removed": [
                    {
                        "annotator": "rater-8",
                        "ratings": 10,
                        "agreement": 0.1,
                        "reason": "agreement under the threshold",
                    },
                    {
                        "annotator": "rater-9",
                        "ratings": 4,
                        "agreement": 0.5,
                        "reason": "excluded by the researcher",
                    },
                ],
                "normalisation": "none",
                "normalisation_note": "",
            }
        ],
        "human": [
            human_row("Human (Avg)", 0.4927, 1e-8, 0.4981, 2e-8),
            human_row("Human (Max)", 0.5931, 1e-12, 0.5926, 3e-12),
        ],
        "agreement": [],
        "rows": [
            metric_row("ruber-gmean", "single", "Hybrid", 0.4559, 1e-7, 0.4771, 1e-7),
            metric_row("my-metric", "none", "Other", 0.1, 0.2777, 0.2, 0.0287),
            metric_row("bleu-2", "multi", "Referenced", 0.2910, 1e-9, 0.2077, 0.0023),
            metric_row("ruber-unreferenced", "none", "Unreferenced", 0.4278, 1e-6, 0.4338, 1e-6),
            metric_row("bleu-2", "single", "Referenced", -0.0006, 0.9914, 0.0546, 0.3464),
            metric_row(
                "bleu-4",
                "single",
                "Referenced",
                None,
                None,
                None,
                None,
                note="not computable: constant metric scores",
            ),
            metric_row("rouge-l", "single", "Referenced", 0.2840, 0.0099, 0.2696, 0.01),
            metric_row("ruber-amean", "single", "Hybrid", 0.4594, 1e-8, 0.4906, 1e-9),
            metric_row("ruber-min", "single", "Hybrid", -0.6, 1e-12, -0.58, 1e-11, n=100),
        ],
        "per_system": [],
        "metric_comparisons": [],
        "system_level": [],
        "quantiles": [],
        "references_curve": [],
        "single_vs_multi": [
            {
                "question": QUESTION,
                "metric": "bleu-2",
                "single_signature": "bleu-2|refs:single|tok:en-v1|version:0.1.0",
                "single_n": 120,
                "single_spearman": 0.0250,
                "single_spearman_p": 0.577,
                "single_pearson": 0.1803,
                "single_pearson_p": 0.0001,
                "multi_signature": "bleu-2|refs:multi|tok:en-v1|version:0.1.0",
                "multi_n": 120,
                "multi_spearman": 0.2077,
                "multi_spearman_p": 0.0023,
                "multi_pearson": 0.2910,
                "multi_pearson_p": 1e-9,
            },
            {
                "question": QUESTION,
                "metric": "bleu-1",
                "single_signature": "bleu-1|refs:single|tok:en-v1|version:0.1.0",
                "single_n": 120,
                "single_spearman": 0.0241,
                "single_spearman_p": 0.591,
                "single_pearson": 0.1183,
                "single_pearson_p": 0.008,
                "multi_signature": "bleu-1|refs:multi|tok:en-v1|version:0.1.0",
                "multi_n": 120,
                "multi_spearman": 0.1572,
                "multi_spearman_p": 0.0004,
                "multi_pearson": 0.2190,
                "multi_pearson_p": None,
            },
        ],
        "diversity": {
            "pairs": 40,
            "judgments": 120,
            "human_score": "mean number of different meanings among the appropriate replies, over raters",
            "rows": [
                {
                    "metric": "self-bleu-2",
                    "inverted": True,
                    "n": 40,
                    "spearman": -0.1534,
                    "spearman_p": 0.0009,
                    "pearson": -0.1251,
                    "pearson_p": 0.005,
                    "note": "",
                },
                {
                    "metric": "distinct-1",
                    "inverted": False,
                    "n": 40,
                    "spearman": 0.0204,
                    "spearman_p": 0.647,
                    "pearson": 0.0465,
                    "pearson_p": 0.299,
                    "note": "",
                },
                {
                    "metric": "recall-bleu-2",
                    "inverted": False,
                    "n": 40,
                    "spearman": 0.2052,
                    "spearman_p": 0.00001,
                    "pearson": 0.2469,
                    "pearson_p": 0.0004,
                    "note": "",
                },
            ],
        },
        "pairwise": None,
        "notes": [],
    }


def empty_document() -> ReportDocument:
    """A document with every section and no entry (a study with nothing to report), to fill in."""
    return {
        "document_version": 2,
        "study": 7,
        "study_name": "Empty",
        "data_version": 1,
        "code_version": "0.1.0",
        "options": {"filter": "study", "normalise": "none", "resamples": 0, "seed": 0},
        "questions": [],
        "filter": [],
        "human": [],
        "agreement": [],
        "rows": [],
        "per_system": [],
        "metric_comparisons": [],
        "system_level": [],
        "quantiles": [],
        "references_curve": [],
        "single_vs_multi": [],
        "diversity": None,
        "pairwise": None,
        "notes": [],
    }
