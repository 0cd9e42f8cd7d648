"""The reproducibility bundle says what the report used: replies the researcher excluded by
adjudication are left out of the report, so the bundle's counts leave them out too, while its per-rating
and per-metric-value files keep them, marked ``excluded=true``, and the counts say how many there are.

Built without figures (kaleido and a browser are the integration test's business,
tests/integration/test_report_worker.py); recompute.py runs as a reader would, in a separate Python.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from annotation.models import Annotator, Response, Study
from annotation.services.adjudication import adjudication_exclude
from correlation.bundle.archive import report_bundle
from correlation.bundle.inputs import BundleStale
from correlation.models import ReportSnapshot
from correlation.report.cache import report_current
from stats.report.types import ReportOptions
from tests.correlation.builders import Item, add_items, bump_data_version, signature
from tests.factories import QuestionFactory, StudyFactory

pytestmark = pytest.mark.django_db

BLEU = "bleu-2|refs:single|tok:13a|version:test"
OPTIONS = ReportOptions.parse({"resamples": "0"})


def rated_study() -> tuple[Study, list[Response]]:
    """Six ordinary replies and one outlier (every rater says 2, BLEU says 0), rated by rater-0..2 and by
    rater-3, whom the researcher left out of reports (the rater filter's business, not adjudication's)."""
    study = StudyFactory.create(kappa_threshold=None)
    question = QuestionFactory.create(study=study, name="appropriateness")
    signature("bleu-2")
    human = [0, 0, 1, 1, 2, 2]
    items = [
        Item(
            system,
            ratings=[score, score, min(2, score + 1), score],
            scores={BLEU: 0.1 * index + 0.05 * score},
        )
        for index, (system, score) in enumerate(zip(["s1", "s2", "s3"] * 2, human, strict=True))
    ]
    items.append(Item("s1", ratings=[2, 2, 2, 2], scores={BLEU: 0.0}))
    responses = add_items(study=study, question=question, items=items)
    Annotator.objects.filter(study=study, pseudonym="rater-3").update(report_inclusion="exclude")
    bump_data_version(study)
    return study, responses


def exclude(response: Response, django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=True):  # the data-version bump runs after commit
        adjudication_exclude(response=response, excluded=True)


def bundle_of(study: Study) -> tuple[zipfile.ZipFile, ReportSnapshot]:
    snapshot = report_current(study=study, options=OPTIONS)
    content = report_bundle(study=study, snapshot=snapshot, with_figures=False)
    return zipfile.ZipFile(io.BytesIO(content)), snapshot


def csv_rows(archive: zipfile.ZipFile, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(archive.read(name).decode("utf-8"))))


def test_an_excluded_reply_is_counted_apart_and_marked_in_the_data_files(
    django_capture_on_commit_callbacks: Any, tmp_path: Path
) -> None:
    study, responses = rated_study()
    outlier = responses[-1]
    exclude(outlier, django_capture_on_commit_callbacks)

    archive, snapshot = bundle_of(study)
    manifest = json.loads(archive.read("manifest.json"))
    counts = manifest["counts"]
    document = snapshot.document or {}

    assert counts["replies"] == {"in_study": 7, "excluded_by_researcher": 1, "in_report": 6}
    assert counts["ratings"] == {
        "in_file": 28,
        "counted": 18,  # three raters on six replies
        "excluded_by_researcher": 4,  # the outlier's, rater-3's included
        "left_out_by_rater_filter": 6,  # rater-3 on the six other replies
        "outside_scale": 0,
    }
    assert counts["ratings_per_question"] == [{"question": "appropriateness", **counts["ratings"]}]
    assert counts["annotators"] == {"with_ratings": 4, "with_counted_ratings": 3}
    assert counts["metric_scores"] == {"in_file": 7, "excluded_by_researcher": 1}
    # ... which are the report's own numbers
    (summary,) = document["questions"]
    (rater_filter,) = document["filter"]
    assert summary["left_out"]["excluded_by_researcher"] == counts["replies"]["excluded_by_researcher"]
    assert summary["human_scored"] == counts["replies"]["in_report"]
    assert rater_filter["ratings_total"] - rater_filter["ratings_removed"] == counts["ratings"]["counted"]
    assert rater_filter["ratings_removed"] == counts["ratings"]["left_out_by_rater_filter"]
    assert {row["n"] for row in document["rows"]} == {6}

    ratings = csv_rows(archive, "inputs/ratings.csv")
    assert list(ratings[0]) == [
        "question",
        "annotator",
        "identity_known",
        "counted",
        "response_id",
        "value",
        "excluded",
    ]
    assert len(ratings) == 28
    marked = [row for row in ratings if row["excluded"] == "true"]
    assert {int(row["response_id"]) for row in marked} == {outlier.pk}
    assert len(marked) == 4
    assert all(row["counted"] == "false" for row in marked)
    counted = [row for row in ratings if row["counted"] == "true"]
    assert len(counted) == 18
    assert {row["annotator"] for row in counted} == {"rater-0", "rater-1", "rater-2"}
    assert outlier.pk not in {int(row["response_id"]) for row in counted}

    metrics = csv_rows(archive, "inputs/metric_scores.csv")
    assert [(int(row["response_id"]), row["excluded"]) for row in metrics] == [
        (response.pk, "true" if response == outlier else "false") for response in responses
    ]
    human = csv_rows(archive, "inputs/human_scores.csv")
    assert sorted(int(row["response_id"]) for row in human) == sorted(r.pk for r in responses[:-1])

    readme = archive.read("README.txt").decode("utf-8")
    assert "7 in the study, 1 excluded by the researcher (adjudication)" in readme
    assert "28 in inputs/ratings.csv, 18 counted by the report" in readme
    assert "4 of excluded replies (excluded=true)" in readme
    tables = sorted(name.removeprefix("tables/") for name in archive.namelist() if name.startswith("tables/"))
    assert "correlations.csv" in tables
    listed = " ".join(readme.split("tables/", 1)[1].split("inputs/", 1)[0].split())
    assert listed == "every section as CSV: " + ", ".join(tables)  # each file the bundle holds, by name

    archive.extractall(tmp_path)
    checked = subprocess.run(
        [sys.executable, "recompute.py", "--quiet"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert " 0 disagree" in checked.stdout


def test_without_adjudication_every_rating_of_a_kept_rater_counts() -> None:
    study, _ = rated_study()

    archive, snapshot = bundle_of(study)
    counts = json.loads(archive.read("manifest.json"))["counts"]

    assert counts["replies"] == {"in_study": 7, "excluded_by_researcher": 0, "in_report": 7}
    assert counts["ratings"]["counted"] == 21
    assert counts["ratings"]["excluded_by_researcher"] == 0
    assert counts["ratings"]["left_out_by_rater_filter"] == 7
    assert {row["excluded"] for row in csv_rows(archive, "inputs/ratings.csv")} == {"false"}
    assert {row["n"] for row in (snapshot.document or {})["rows"]} == {7}


def test_a_report_older_than_the_data_gives_no_bundle(django_capture_on_commit_callbacks: Any) -> None:
    study, responses = rated_study()
    snapshot = report_current(study=study, options=OPTIONS)
    exclude(responses[0], django_capture_on_commit_callbacks)  # after the report: not in it

    with pytest.raises(BundleStale, match="changed after this report was computed"):
        report_bundle(study=study, snapshot=snapshot, with_figures=False)
