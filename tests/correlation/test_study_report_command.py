"""``manage.py study_report``: JSON and CSV output parsed back and compared with the report rows."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F

from annotation.models import Study
from correlation.management.commands import study_report as study_report_command
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import assert_same_numbers, report_document
from tests.factories import QuestionFactory, StudyFactory

pytestmark = pytest.mark.django_db

# The CSV's first columns, in order: new columns are only ever added after them.
LEGACY_COLUMNS = (
    "question",
    "metric",
    "references",
    "signature",
    "n",
    "pearson",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "note",
)


@pytest.fixture
def study():
    study = StudyFactory.create(name="grade dailydialog")
    coherence = QuestionFactory.create(study=study, name="coherence", scale_min=1, scale_max=5)
    QuestionFactory.create(study=study, name="fluency", position=1, scale_min=1, scale_max=5)
    single, multi = signature("bleu-2", refs="single"), signature("bleu-2", refs="multi")
    add_items(
        study=study,
        question=coherence,
        items=[
            Item(
                f"s{i % 2}",
                ratings=[1 + i % 5, 1 + (i * 3) % 5],
                scores={single.text: i / 20, multi.text: (i % 7) / 9},
            )
            for i in range(12)
        ],
    )
    return study


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("study_report", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_json_to_stdout_is_the_report_document(study) -> None:
    document = json.loads(_run("grade dailydialog"))
    assert_same_numbers(document["rows"], report_document(study, resamples=1000)["rows"])
    assert {"human", "agreement", "metric_comparisons", "system_level", "filter"} <= set(document)
    rows = document["rows"]
    assert [(r["question"], r["metric"], r["references"]) for r in rows] == [
        ("coherence", "bleu-2", "multi"),
        ("coherence", "bleu-2", "single"),
        ("fluency", "bleu-2", "multi"),
        ("fluency", "bleu-2", "single"),
    ]
    coherence_single = rows[1]
    assert coherence_single["n"] == 12
    assert (
        -1
        <= coherence_single["pearson_ci"][0]
        <= coherence_single["pearson"]
        <= coherence_single["pearson_ci"][1]
    )
    assert rows[2]["n"] == 0
    assert rows[2]["pearson"] is None
    assert rows[2]["note"] == "too few items"


def test_csv_to_a_file_for_one_question(study, tmp_path) -> None:
    target = tmp_path / "report.csv"
    assert (
        _run("grade dailydialog", "--format", "csv", "--question", "coherence", "--output", str(target)) == ""
    )

    with target.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ())[: len(LEGACY_COLUMNS)] == LEGACY_COLUMNS
        parsed = list(reader)
    from correlation.models import ReportSnapshot

    stored = ReportSnapshot.objects.get(study=study).document  # the report the command wrote from
    assert stored is not None
    assert_same_numbers(stored["rows"], report_document(study, resamples=1000)["rows"])
    expected = [row for row in stored["rows"] if row["question"] == "coherence"]
    assert len(parsed) == len(expected) == 2
    for got, want in zip(parsed, expected, strict=True):
        assert got["signature"] == want["signature"]
        assert int(got["n"]) == want["n"]
        assert float(got["pearson"]) == want["pearson"]  # repr keeps every digit
        assert float(got["spearman_p"]) == want["spearman_p"]
        assert [float(got["pearson_ci_low"]), float(got["pearson_ci_high"])] == want["pearson_ci"]
        assert [float(got["spearman_ci_low"]), float(got["spearman_ci_high"])] == want["spearman_ci"]


def test_csv_leaves_undefined_statistics_empty(study) -> None:
    parsed = list(
        csv.DictReader(io.StringIO(_run("grade dailydialog", "--format", "csv", "--question", "fluency")))
    )
    assert {row["pearson"] for row in parsed} == {""}
    assert {row["spearman_ci_high"] for row in parsed} == {""}
    assert {row["note"] for row in parsed} == {"too few items"}


def test_unknown_study_or_question_is_an_error(study) -> None:
    with pytest.raises(CommandError, match="no study with the name or id"):
        _run("nope")
    with pytest.raises(CommandError, match="no question named"):
        _run("grade dailydialog", "--question", "nope")
    with pytest.raises(CommandError, match="filter"):
        _run("grade dailydialog", "--filter", "lenient")


def test_bundle_is_written_beside_the_report(study, tmp_path) -> None:
    target = tmp_path / "bundle.zip"
    _run("grade dailydialog", "--resamples", "0", "--bundle", str(target))

    with zipfile.ZipFile(target) as bundle:
        names = bundle.namelist()
        manifest = json.loads(bundle.read(next(name for name in names if name.endswith("manifest.json"))))
    assert any(name.endswith("ratings.csv") for name in names)
    assert manifest["counts"]["replies"]["in_study"] == 12


def test_a_bundle_whose_data_changed_during_the_report_is_a_clean_command_error(
    study, tmp_path, monkeypatch
) -> None:
    """An annotator answering while the command computes the report: the report is then older than the
    data, the bundle is refused, and the command says so instead of a traceback, writing nothing."""
    computed = study_report_command.report_current

    def answered_meanwhile(**kwargs):
        snapshot = computed(**kwargs)
        Study.objects.filter(pk=study.pk).update(data_version=F("data_version") + 1)  # a rating came in
        return snapshot

    monkeypatch.setattr(study_report_command, "report_current", answered_meanwhile)
    target = tmp_path / "bundle.zip"

    with pytest.raises(
        CommandError, match=r"no bundle written: the data of study 'grade dailydialog' changed"
    ):
        _run("grade dailydialog", "--resamples", "0", "--bundle", str(target))
    assert not target.exists()
