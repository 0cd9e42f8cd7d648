"""The report's tables as CSV (correlation/report/exports.py): every section of the report document, its columns
and values read back through ``csv.reader`` (numbers with every digit, None as an empty cell, intervals as
two columns), and CSV formula injection neutralised in every table (OWASP's rule, kernel/csv_cells.py).
Pure: hand-made documents, no database."""

from __future__ import annotations

import csv
import io
from typing import Any, cast

import numpy as np
import pytest

from correlation.report.exports import correlation_rows_as_csv, csv_text, report_table_csv, report_tables_csv
from stats.report.csv_columns import CSV_COLUMNS, LEGACY_CSV_COLUMNS
from stats.report.csv_tables import (
    agreement_annotators_table,
    agreement_pairs_table,
    agreement_table,
    diversity_table,
    filter_table,
    human_table,
    metric_comparisons_table,
    per_system_table,
    quantiles_table,
    questions_table,
    references_curve_table,
    report_table_names,
    single_vs_multi_table,
    system_level_table,
)
from stats.report.document_types import MetricRow, PerSystemRow, ReportDocument
from tests.correlation.report_documents import QUESTION, metric_row, paper_document

PAYLOAD = "=cmd|' /C calc'!A0"
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# What the utterance-level CSV had before the report document; scripts read these columns by position.
PUBLISHED_COLUMNS = (
    "question", "metric", "references", "signature", "n",
    "pearson", "pearson_p", "pearson_ci_low", "pearson_ci_high",
    "spearman", "spearman_p", "spearman_ci_low", "spearman_ci_high", "note",
)  # fmt: skip
SECTIONS = (
    "questions",
    "filter",
    "human",
    "correlations",
    "per_system",
    "metric_comparisons",
    "system_level",
    "agreement",
    "agreement_annotators",
    "agreement_pairs",
    "single_vs_multi",
    "references_curve",
    "quantiles",
    "diversity",
)


def _read(text: str) -> tuple[list[str], list[dict[str, str]]]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = rows[0], rows[1:]
    assert all(len(row) == len(header) for row in body)
    return header, [dict(zip(header, row, strict=True)) for row in body]


def _full_document() -> ReportDocument:
    """The paper document with every other section filled in, as build_report fills it."""
    document = paper_document()
    document["per_system"] = [
        cast(
            PerSystemRow,
            {**metric_row("bleu-2", "single", "Referenced", 0.125, 0.5, -0.25, 0.03, n=60), "system": "hred"},
        ),
    ]
    document["metric_comparisons"] = [
        {
            "question": QUESTION,
            "first": "bleu-2|refs:multi",
            "first_metric": "bleu-2",
            "second": "bleu-2|refs:single",
            "second_metric": "bleu-2",
            "n": 120,
            "pearson_difference": 0.2916,
            "williams_t": 3.1,
            "williams_p": 0.0021,
            "bootstrap_p": 0.004,
            "spearman_difference": 0.1531,
            "williams_p_spearman": 0.06,
            "bootstrap_p_spearman": 0.07,
            "metrics_pearson": 0.6,
            "winner": "bleu-2|refs:multi",
            "note": "",
        }
    ]
    document["system_level"] = [
        {
            "question": QUESTION,
            "metric": "bleu-2",
            "references": "multi",
            "signature": "bleu-2|refs:multi",
            "group": "Referenced",
            "n": 3,
            "pearson": 0.9,
            "pearson_p": 0.28,
            "pearson_ci": [None, None],
            "spearman": 1.0,
            "spearman_p": 0.0,
            "spearman_ci": [None, None],
            "kendall": 1.0,
            "kendall_p": 0.33,
            "kendall_ci": [None, None],
            "origin": "builtin",
            "implementation": "",
            "note": "",
            "systems": [
                {"system": "hred", "human_mean": 3.1, "metric_mean": 0.21, "n": 100},
                {"system": "human", "human_mean": 3.6, "metric_mean": 0.31, "n": 99},
                {"system": "retrieval", "human_mean": 2.5, "metric_mean": 0.11, "n": 100},
            ],
        },
        {
            "question": QUESTION,
            "metric": "meteor",
            "references": "single",
            "signature": "meteor|refs:single",
            "group": "Referenced",
            "n": 0,
            "pearson": None,
            "pearson_p": None,
            "pearson_ci": [None, None],
            "spearman": None,
            "spearman_p": None,
            "spearman_ci": [None, None],
            "kendall": None,
            "kendall_p": None,
            "kendall_ci": [None, None],
            "origin": "builtin",
            "implementation": "",
            "note": "fewer than 3 systems",
            "systems": [],
        },
    ]
    document["agreement"] = [
        {
            "question": QUESTION,
            "scale": [0, 2],
            "identity": "known",
            "note": "",
            "krippendorff_alpha_ordinal": {"value": 0.41, "items": 120, "ratings": 346, "note": ""},
            "krippendorff_alpha_interval": {"value": 0.43, "items": 120, "ratings": 346, "note": ""},
            "krippendorff_alpha_ordinal_before_filter": {
                "value": 0.38,
                "items": 120,
                "ratings": 360,
                "note": "",
            },
            "fleiss_kappa": {
                "value": None,
                "items": 0,
                "ratings": 0,
                "note": "not computable: raters differ",
            },
            "icc": {
                "value": 0.5,
                "items": 120,
                "ratings": 346,
                "note": "",
                "type": "ICC(A,1)",
                "ci95": [0.4, 0.6],
            },
            "cohen_kappa_mean": {"value": 0.42, "items": 120, "ratings": 240, "note": "", "pairs": 36},
            "annotators": [
                {
                    "annotator": "rater-1",
                    "ratings": 40,
                    "included": True,
                    "agreement_kappa": 0.45,
                    "pair_kappa_mean": 0.44,
                    "alpha_without": 0.40,
                    "alpha_change_without": -0.01,
                    "pearson_vs_rest": 0.51,
                    "pearson_vs_rest_p": 1e-5,
                    "spearman_vs_rest": 0.5,
                    "spearman_vs_rest_p": 2e-5,
                    "shared_replies": 40,
                }
            ],
            "pairs": [{"first": "rater-1", "second": "rater-2", "kappa": -0.05, "items": 12, "note": ""}],
        }
    ]
    document["references_curve"] = [
        {
            "question": QUESTION,
            "signature": "bleu-2|refs:multi",
            "metric": "bleu-2",
            "items": 120,
            "max_references": 2,
            "stored_multi_pearson": 0.291,
            "points": [
                {"references": 1, "pearson_mean": 0.2, "pearson_sd": 0.01, "spearman_mean": 0.1,
                 "spearman_sd": 0.02, "items": 118},
                {"references": 2, "pearson_mean": 0.29, "pearson_sd": 0.0, "spearman_mean": 0.2,
                 "spearman_sd": 0.0, "items": 120},
            ],
        }
    ]  # fmt: skip
    document["quantiles"] = [
        {
            "question": QUESTION,
            "signature": "bleu-2|refs:multi",
            "metric": "bleu-2",
            "groups": [
                {"human_low": 0.0, "human_high": 0.5, "human_mean": 0.2, "metric_mean": 0.05, "items": 24},
                {"human_low": 0.5, "human_high": 2.0, "human_mean": 1.4, "metric_mean": 0.15, "items": 24},
            ],
        }
    ]
    return document


# -- the utterance-level table ------------------------------------------------------------------------------


def test_the_published_columns_come_first_and_in_order() -> None:
    assert CSV_COLUMNS[: len(PUBLISHED_COLUMNS)] == PUBLISHED_COLUMNS == LEGACY_CSV_COLUMNS
    assert CSV_COLUMNS[len(PUBLISHED_COLUMNS) :] == (
        "kendall", "kendall_p", "kendall_ci_low", "kendall_ci_high",
        "pearson_ci_bootstrap_low", "pearson_ci_bootstrap_high",
        "spearman_ci_bootstrap_low", "spearman_ci_bootstrap_high",
        "group", "no_metric_score", "implementation",
        "rank", "grouping",
        "grouped_pearson", "grouped_pearson_ci_low", "grouped_pearson_ci_high",
        "grouped_spearman", "grouped_spearman_ci_low", "grouped_spearman_ci_high",
        "grouped_kendall", "grouped_kendall_ci_low", "grouped_kendall_ci_high",
        "grouped_groups", "grouped_groups_total", "grouped_left_out", "grouped_note",
        "display", "judge_question", "judge_own_question", "label_mass",
    )  # fmt: skip


def test_correlation_rows_round_trip_with_every_digit() -> None:
    row = metric_row(
        "bleu-2", "multi", "Referenced", 0.29101234567891234, 1.2345678901234567e-9, -0.2077, 0.0023,
        n=117, kendall=0.1234567890123, kendall_p=0.04,
    )  # fmt: skip
    header, (line,) = _read(correlation_rows_as_csv([row]))
    assert tuple(header) == CSV_COLUMNS
    assert line["question"] == QUESTION
    assert line["signature"] == "bleu-2|refs:multi|tok:en-v1|version:0.1.0"
    assert line["n"] == "117"
    for column in ("pearson", "pearson_p", "spearman", "spearman_p", "kendall", "kendall_p"):
        assert line[column] == repr(row[column]), column
        assert float(line[column]) == row[column]
    for interval in (
        "pearson_ci",
        "spearman_ci",
        "kendall_ci",
        "pearson_ci_bootstrap",
        "spearman_ci_bootstrap",
    ):
        assert float(line[f"{interval}_low"]) == row[interval][0], interval
        assert float(line[f"{interval}_high"]) == row[interval][1], interval
    assert line["spearman"].startswith("-0.2077")  # a negative number stays a number, no quote
    assert line["group"] == "Referenced"
    assert line["no_metric_score"] == "3"
    assert line["note"] == ""


def test_none_is_an_empty_cell() -> None:
    row = metric_row(
        "bleu-4", "single", "Referenced", None, None, None, None, note="not computable: constant"
    )
    _, (line,) = _read(correlation_rows_as_csv([row]))
    for column in CSV_COLUMNS:
        if column not in (
            "question",
            "metric",
            "references",
            "signature",
            "n",
            "note",
            "group",
            "no_metric_score",
        ):
            assert line[column] == "", column
    assert line["note"] == "not computable: constant"


def test_rows_from_before_the_report_document_leave_the_new_columns_empty() -> None:
    old = {
        "question": QUESTION, "metric": "bleu-2", "references": "single", "signature": "bleu-2|refs:single",
        "n": 12, "pearson": 0.5, "pearson_p": 0.1, "pearson_ci": [0.1, 0.8],
        "spearman": 0.4, "spearman_p": 0.2, "spearman_ci": [0.0, 0.7], "note": "",
    }  # fmt: skip
    _, (line,) = _read(correlation_rows_as_csv([cast(MetricRow, old)]))  # deliberately an old, partial row
    assert [line[c] for c in PUBLISHED_COLUMNS] == [
        QUESTION, "bleu-2", "single", "bleu-2|refs:single", "12", "0.5", "0.1", "0.1", "0.8", "0.4", "0.2",
        "0.0", "0.7", "",
    ]  # fmt: skip
    assert all(line[c] == "" for c in CSV_COLUMNS[len(PUBLISHED_COLUMNS) :])


def test_numpy_numbers_are_written_as_numbers() -> None:
    row = metric_row("bleu-2", "single", "Referenced", 0.5, 0.1, 0.4, 0.2)
    row["pearson"] = np.float64(-0.1234567890123456)
    row["n"] = np.int64(7)  # type: ignore[typeddict-item]  # a NumPy number where the document has an int
    _, (line,) = _read(correlation_rows_as_csv([row]))
    assert line["pearson"] == "-0.1234567890123456"
    assert line["n"] == "7"


# -- the other sections -------------------------------------------------------------------------------------


def test_human_rows() -> None:
    header, lines = _read(csv_text(human_table(paper_document()["human"])))
    assert header == [
        "question", "label", "pearson", "pearson_p", "spearman", "spearman_p", "raters",
        "pearson_rater", "spearman_rater", "note",
    ]  # fmt: skip
    assert [line["label"] for line in lines] == ["Human (Avg)", "Human (Max)"]
    assert float(lines[1]["pearson"]) == 0.5931
    assert float(lines[1]["pearson_p"]) == 1e-12
    assert lines[1]["pearson_rater"] == "rater-3"
    assert lines[0]["pearson_rater"] == ""


def test_per_system_rows() -> None:
    header, (line,) = _read(csv_text(per_system_table(_full_document()["per_system"])))
    assert header[:3] == ["question", "system", "metric"]
    assert set(header) == {*CSV_COLUMNS, "system"}
    assert line["system"] == "hred"
    assert line["spearman"] == "-0.25"
    assert line["no_metric_score"] == "60"


def test_metric_comparisons() -> None:
    header, (line,) = _read(csv_text(metric_comparisons_table(_full_document()["metric_comparisons"])))
    assert header[:6] == ["question", "first", "first_metric", "second", "second_metric", "n"]
    assert float(line["williams_p"]) == 0.0021
    assert float(line["bootstrap_p"]) == 0.004
    assert line["winner"] == "bleu-2|refs:multi"


def test_system_level_has_one_line_per_system_mean() -> None:
    header, lines = _read(csv_text(system_level_table(_full_document()["system_level"])))
    assert header[:9] == [
        "question", "metric", "references", "signature", "group", "system", "replies", "human_mean", "metric_mean",
    ]  # fmt: skip
    assert [(line["signature"], line["system"]) for line in lines] == [
        ("bleu-2|refs:multi", "hred"),
        ("bleu-2|refs:multi", "human"),
        ("bleu-2|refs:multi", "retrieval"),
        ("meteor|refs:single", ""),  # no system: still one line, with its note
    ]
    assert [float(line["human_mean"]) for line in lines[:3]] == [3.1, 3.6, 2.5]
    assert lines[1]["replies"] == "99"
    assert {line["systems"] for line in lines[:3]} == {"3"}
    assert {line["pearson"] for line in lines[:3]} == {"0.9"}
    assert lines[3]["note"] == "fewer than 3 systems"
    assert lines[3]["pearson"] == ""


def test_agreement_coefficients_annotators_and_pairs() -> None:
    sections = _full_document()["agreement"]
    header, lines = _read(csv_text(agreement_table(sections)))
    assert header == ["question", "identity", "coefficient", "value", "items", "ratings", "note", "details"]
    by_name = {line["coefficient"]: line for line in lines}
    assert list(by_name) == [
        "krippendorff_alpha_ordinal", "krippendorff_alpha_interval", "krippendorff_alpha_ordinal_before_filter",
        "fleiss_kappa", "icc", "cohen_kappa_mean",
    ]  # fmt: skip
    assert float(by_name["krippendorff_alpha_ordinal"]["value"]) == 0.41
    assert by_name["fleiss_kappa"]["value"] == ""
    assert by_name["fleiss_kappa"]["note"] == "not computable: raters differ"
    assert by_name["icc"]["details"] == '{"ci95": [0.4, 0.6], "type": "ICC(A,1)"}'
    assert by_name["krippendorff_alpha_ordinal"]["details"] == ""

    header, (annotator,) = _read(csv_text(agreement_annotators_table(sections)))
    assert header[:4] == ["question", "annotator", "ratings", "included"]
    assert annotator["annotator"] == "rater-1"
    assert annotator["included"] == "True"
    assert annotator["alpha_change_without"] == "-0.01"
    assert float(annotator["pearson_vs_rest_p"]) == 1e-5

    header, (pair,) = _read(csv_text(agreement_pairs_table(sections)))
    assert header == ["question", "first", "second", "kappa", "items", "note"]
    assert (pair["first"], pair["second"], pair["kappa"], pair["items"]) == (
        "rater-1",
        "rater-2",
        "-0.05",
        "12",
    )


def test_filter_and_questions() -> None:
    document = paper_document()
    _, (entry,) = _read(csv_text(filter_table(document["filter"])))
    assert entry["threshold"] == "0.2"
    assert entry["ratings_removed"] == "14"
    assert entry["removed_annotators"] == (
        "rater-8 (10: agreement under the threshold); rater-9 (4: excluded by the researcher)"
    )
    _, (question,) = _read(csv_text(questions_table(document["questions"])))
    assert question == {
        "name": QUESTION, "scale_min": "0", "scale_max": "2", "responses": "125", "human_scored": "120",
        "ratings": "360", "imported_means": "0", "no_human_score": "5",
    }  # fmt: skip


def test_single_vs_multi_and_diversity() -> None:
    document = paper_document()
    header, lines = _read(csv_text(single_vs_multi_table(document["single_vs_multi"])))
    assert header == [
        "question", "metric",
        "single_signature", "single_n", "single_spearman", "single_spearman_p", "single_pearson", "single_pearson_p",
        "multi_signature", "multi_n", "multi_spearman", "multi_spearman_p", "multi_pearson", "multi_pearson_p",
        "display",
    ]  # fmt: skip
    assert float(lines[0]["single_pearson"]) == 0.1803
    assert float(lines[0]["multi_pearson_p"]) == 1e-9
    assert lines[1]["multi_pearson_p"] == ""

    header, lines = _read(csv_text(diversity_table(document["diversity"])))
    assert header == ["metric", "inverted", "n", "spearman", "spearman_p", "pearson", "pearson_p", "note"]
    assert [(line["metric"], line["inverted"]) for line in lines] == [
        ("self-bleu-2", "True"), ("distinct-1", "False"), ("recall-bleu-2", "False"),
    ]  # fmt: skip
    assert lines[0]["spearman"] == "-0.1534"
    assert csv_text(diversity_table(None)) == ",".join(header) + "\n"


def test_references_curve_and_quantiles() -> None:
    document = _full_document()
    _, points = _read(csv_text(references_curve_table(document["references_curve"])))
    assert [(p["references"], p["pearson_mean"], p["point_items"], p["items"]) for p in points] == [
        ("1", "0.2", "118", "120"),
        ("2", "0.29", "120", "120"),
    ]
    _, groups = _read(csv_text(quantiles_table(document["quantiles"])))
    assert [(g["quantile"], g["human_mean"], g["metric_mean"], g["items"]) for g in groups] == [
        ("1", "0.2", "0.05", "24"),
        ("2", "1.4", "0.15", "24"),
    ]


def test_report_tables_csv_has_every_section() -> None:
    document = _full_document()
    tables = report_tables_csv(document)
    assert tuple(tables) == SECTIONS
    assert tables["correlations"] == correlation_rows_as_csv(document["rows"])
    assert tables["system_level"] == csv_text(system_level_table(document["system_level"]))
    document["diversity"] = None
    document["per_system"] = []
    tables = report_tables_csv(document)
    assert "diversity" not in tables
    assert tables["per_system"].count("\n") == 1  # the header: an empty table is still a file


def test_the_section_names_and_one_section_are_those_of_every_table() -> None:
    """The page lists the sections and serves one of them without building the others: the same names, in
    the same order, and the same bytes as the whole set."""
    for document in (_full_document(), paper_document()):
        tables = report_tables_csv(document)
        assert report_table_names(document) == list(tables)
        for name, text in tables.items():
            assert report_table_csv(document, name) == text
    document = paper_document()
    document["diversity"] = None
    assert report_table_csv(document, "diversity") is None
    assert report_table_csv(document, "no-such-table") is None


# -- formula injection --------------------------------------------------------------------------------------


def _poisoned(value: Any) -> Any:
    """Every text in the document replaced by a formula (numbers left as they are)."""
    if isinstance(value, dict):
        return {key: _poisoned(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_poisoned(item) for item in value]
    if isinstance(value, str):
        return PAYLOAD
    return value


@pytest.mark.parametrize("section", SECTIONS)
def test_every_table_neutralises_formulas(section: str) -> None:
    tables = report_tables_csv(_poisoned(_full_document()))
    rows = list(csv.reader(io.StringIO(tables[section], newline="")))
    cells = [cell for row in rows[1:] for cell in row]
    assert "'" + PAYLOAD in cells, "the table holds no text to poison: the test would prove nothing"
    for cell in cells:
        if cell.startswith(TRIGGERS):
            float(cell)  # only a number (a negative one) may start like a formula
    assert PAYLOAD not in cells


def test_a_formula_after_a_carriage_return_stays_inside_its_cell() -> None:
    row = metric_row("bleu-2", "single", "Referenced", -0.5, 0.1, 0.4, 0.2, note="ok\r" + PAYLOAD)
    row["metric"] = "\r" + PAYLOAD
    _, (line,) = _read(correlation_rows_as_csv([row]))
    assert line["note"] == "ok\r" + PAYLOAD
    assert line["metric"] == "'\r" + PAYLOAD
    assert line["pearson"] == "-0.5"
