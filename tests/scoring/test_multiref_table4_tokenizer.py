"""Acceptance on real data: Gupta et al. (2019) Table 4's single-reference BLEU rows, reproduced with ``tokenizer=none``.

The 500 rated replies of the multi-reference study (mturk_rating_processed_output.csv: 100 DailyDialog test
contexts x 5 systems, mean MTurk ratings 1-5) go through the app's import service; single-reference scoring
uses each context's original reply (the CSV's ``prevgt``, imported as the "original" reference); the
scores come from the service path ``score_study --sync`` uses and the correlations from the report service.
The text is already tokenized, and the paper's numbers are those of whitespace tokens with nltk's
smoothing method1: exact at 4 decimals. The project's English tokenizer re-splits that text (times such
as "2:00", "a.m.", the systems' "_UNK") and gives other numbers, which shows the option matters.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from annotation.importers import ImportFile
from annotation.models import Response, Study
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from correlation.report.cache import report_current
from scoring.models import RunStatus
from scoring.services import scoring_run_create, scoring_run_execute
from stats.report.types import ReportOptions

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]

RATINGS_CSV = Path("multirefeval") / "mturk_rating_processed_output.csv"
# Gupta et al. (2019), Table 4, "Single" rows: (Spearman, Pearson).
TABLE_4_SINGLE = {"bleu-1": (0.0241, 0.1183), "bleu-2": (0.0250, 0.1803), "bleu-4": (0.0345, 0.1380)}


def _imported_study(shared_data: Path, owner) -> Study:
    path = shared_data / RATINGS_CSV
    if not path.is_file():
        pytest.skip(f"real-data check skipped: {path} is not present in this checkout")
    study = study_create(owner=owner, name="multirefeval table 4", scale="1-5")
    study_import(
        study=study, format="multiref-ratings", files=[ImportFile(name=path.name, data=path.read_bytes())]
    )
    with path.open(newline="", encoding="utf-8") as f:
        originals = {row["context_id"]: row["prevgt"].strip() for row in csv.DictReader(f)}
    responses = Response.objects.filter(context__study=study).select_related("context")
    assert responses.count() == 500
    # "single" scores against the original reference, which must be the CSV's prevgt
    for response in responses:
        assert (
            response.context.references.get(origin="original").text == originals[response.context.external_id]
        )
    return study


def _single_reference_rows(study: Study, tokenizer: str) -> dict[str, dict]:
    """BLEU-1/2/4 against the single reference with ``tokenizer``, as ``score_study --sync`` runs them."""
    run = scoring_run_create(
        study=study, metrics=list(TABLE_4_SINGLE), references="single", tokenizer=tokenizer, enqueue=False
    )
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.notes == ""  # every reply has its reference: nothing skipped
    tok = "none" if tokenizer == "none" else "en-v1"
    study.refresh_from_db()
    document = report_current(study=study, options=ReportOptions(resamples=0)).document or {}
    rows = {row["metric"]: row for row in document["rows"] if f"|tok:{tok}|" in row["signature"]}
    assert set(rows) == set(TABLE_4_SINGLE)
    for row in rows.values():
        assert row["references"] == "single"
        assert row["n"] == 500
    return rows


def test_tokenizer_none_reproduces_the_single_reference_bleu_rows_of_table_4(shared_data, researcher) -> None:
    study = _imported_study(shared_data, researcher)
    rows = _single_reference_rows(study, "none")
    obtained = {
        name: (round(row["spearman"] or 0.0, 4), round(row["pearson"] or 0.0, 4))
        for name, row in rows.items()
    }
    assert obtained == TABLE_4_SINGLE


def test_the_default_english_tokenizer_gives_other_numbers(shared_data, researcher) -> None:
    study = _imported_study(shared_data, researcher)
    default = _single_reference_rows(study, "default")["bleu-1"]
    assert default["spearman"] == pytest.approx(0.0206, abs=5e-5)
    assert default["pearson"] == pytest.approx(0.1164, abs=5e-5)
    spearman, pearson = TABLE_4_SINGLE["bleu-1"]
    assert round(default["spearman"] or 0.0, 4) != spearman
    assert round(default["pearson"] or 0.0, 4) != pearson
