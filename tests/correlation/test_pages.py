"""The report page and its downloads: who may see them, what they show, and that user text stays escaped."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.staticfiles import finders
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Annotator
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import assert_same_numbers, report_document, report_get, report_page
from tests.factories import QuestionFactory, ResearcherFactory, StudyFactory, UserFactory

pytestmark = pytest.mark.django_db

PLOTLY = "vendor/plotly/plotly.min.js"
HOSTILE = "<script>alert('pwned')</script> & <b>bold</b>"


@pytest.fixture
def scored_study(researcher):
    study = StudyFactory.create(owner=researcher, name="multiref pilot")
    question = QuestionFactory.create(study=study, name="appropriateness")
    bleu, meteor = signature("bleu-2", refs="multi"), signature("meteor")
    add_items(
        study=study,
        question=question,
        items=[
            Item(system, ratings=[r1, r2], scores={bleu.text: b, meteor.text: m}, text=f"reply {i}")
            for i, (system, r1, r2, b, m) in enumerate(
                [
                    ("hred", 2, 2, 0.40, 0.30),
                    ("hred", 1, 0, 0.12, 0.22),
                    ("human", 2, 1, 0.35, 0.41),
                    ("human", 2, 2, 0.52, 0.38),
                    ("retrieval", 0, 0, 0.03, 0.10),
                    ("retrieval", 0, 1, 0.09, 0.07),
                    ("seq2seq", 1, 1, 0.21, 0.16),
                    ("seq2seq", 0, 1, 0.02, 0.12),
                ]
            )
        ],
    )
    return study


def _report_url(study, **query: str) -> str:
    url = reverse("correlation:study-report", args=[study.pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def test_the_owner_sees_the_human_rows_above_the_metrics_tabs_and_plotly_from_static(
    client, scored_study
) -> None:
    client.force_login(scored_study.owner)
    page = report_page(client, _report_url(scored_study))

    assert page.status_code == 200
    html = page.content.decode()
    assert "multiref pilot" in html
    assert reverse("annotation:study-detail", args=[scored_study.pk]) in html
    assert '<span class="num" id="human-scored">8</span> of 8 responses' in html
    rows = page.context["report"]["rows"]
    assert [(row["metric"], row["references"]) for row in rows] == [("bleu-2", "multi"), ("meteor", "single")]
    table = html[html.index('id="utterance-table"') :]
    assert table.index("Human (Avg)") < table.index("Human (Max)") < table.index(">bleu-2<")
    for tab in ("metrics", "agreement", "comparisons", "system", "references", "downloads"):
        assert f'id="tab-{tab}"' in html
    assert 'data-figure="agreement-heatmap"' in html
    assert 'data-figure="figure-4a"' in html
    assert 'data-figure="figure-4b"' in html
    assert f'<script src="/static/{PLOTLY}"></script>' in html
    assert '<script src="/static/correlation/report.js"></script>' in html
    assert finders.find(PLOTLY), "settings must serve plotly's package_data under vendor/plotly"
    assert finders.find("correlation/report.js")
    assert "cdn" not in html.lower()
    assert reverse("correlation:study-report-csv", args=[scored_study.pk]) in html
    assert reverse("correlation:study-report-json", args=[scored_study.pk]) in html
    assert reverse("correlation:study-report-status", args=[scored_study.pk]) in html


def test_the_report_is_computed_once_per_data_version(client, scored_study) -> None:
    from correlation.models import ReportSnapshot

    client.force_login(scored_study.owner)
    report_page(client, _report_url(scored_study))
    [first] = ReportSnapshot.objects.filter(study=scored_study)
    report_page(client, _report_url(scored_study))
    assert list(ReportSnapshot.objects.filter(study=scored_study)) == [first]  # served from the cache

    question = scored_study.questions.get()
    add_items(study=scored_study, question=question, items=[Item("hred", ratings=[2])])
    page = report_page(client, _report_url(scored_study))
    [second] = ReportSnapshot.objects.filter(study=scored_study)  # the old one is replaced
    assert second.data_version > first.data_version
    assert page.context["report"]["summary"]["responses"] == 9


def test_significant_statistics_are_bold(client, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study)
    strong = signature("strong")
    add_items(
        study=study,
        question=question,
        items=[Item("s", ratings=[i % 3], scores={strong.text: (i % 3) + i / 100}) for i in range(30)],
    )
    client.force_login(researcher)
    html = report_page(client, _report_url(study)).content.decode()
    metric_row = html[html.index('title="strong') :]
    metric_row = metric_row[: metric_row.index("</tr>")]
    assert metric_row.count('class="num significant"') == 4  # r, its p, rho, its p


@pytest.mark.parametrize("who", ["other researcher", "annotator of the study", "plain user"])
def test_everyone_but_the_owner_gets_404(client, scored_study, who: str) -> None:
    if who == "other researcher":
        user = ResearcherFactory.create(username="bob")
    else:
        user = UserFactory.create(username="carol")
        if who == "annotator of the study":
            Annotator.objects.create(study=scored_study, user=user, pseudonym="carol")
    client.force_login(user)
    for name in (
        "correlation:study-report",
        "correlation:study-report-csv",
        "correlation:study-report-json",
        "correlation:study-report-status",
        "correlation:study-report-figures",
        "correlation:study-item-scores",
    ):
        assert client.get(reverse(name, args=[scored_study.pk])).status_code == 404


def test_a_superuser_may_read_any_report_and_anonymous_users_are_sent_to_log_in(client, scored_study) -> None:
    response = report_page(client, _report_url(scored_study))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]
    admin = UserFactory.create(username="root", is_superuser=True, is_staff=True)
    client.force_login(admin)
    assert report_page(client, _report_url(scored_study)).status_code == 200


def test_response_and_system_text_stay_escaped(client, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study)
    bleu = signature()
    add_items(
        study=study,
        question=question,
        items=[
            Item(system, ratings=[r], scores={bleu.text: v}, text=HOSTILE)
            for system, r, v in [
                ("<b>evil</b>", 0, 0.1),
                ("<b>evil</b>", 2, 0.4),
                ("plain", 1, 0.2),
                ("x", 2, 0.3),
            ]
        ],
    )
    client.force_login(researcher)
    html = report_page(client, _report_url(study)).content.decode()

    assert "<script>alert" not in html
    assert "<b>evil</b>" not in html
    assert "<b>bold</b>" not in html
    assert "&lt;b&gt;evil&lt;/b&gt;" in html  # the system-level table


def test_empty_states(client, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study)
    client.force_login(researcher)

    html = report_page(client, _report_url(study)).content.decode()
    assert "No human scores yet" in html
    assert "No metric scores yet — start a scoring run" in html

    add_items(study=study, question=question, items=[Item("s", ratings=[1]), Item("s", ratings=[2])])
    html = report_page(client, _report_url(study)).content.decode()
    assert "No human scores yet" not in html
    assert "No metric scores yet — start a scoring run" in html

    bleu = signature()
    add_items(
        study=study,
        question=QuestionFactory.create(study=study, name="other"),
        items=[Item("s", scores={bleu.text: 1})],
    )
    html = report_page(client, _report_url(study, question="other")).content.decode()
    assert "No human scores yet" in html
    assert "No metric scores yet" not in html


def test_the_question_selector_switches_questions(client, scored_study) -> None:
    client.force_login(scored_study.owner)
    assert 'id="question-select"' not in report_page(client, _report_url(scored_study)).content.decode()

    fluency = QuestionFactory.create(study=scored_study, name="fluency", position=1, scale_min=1, scale_max=5)
    bleu = signature("bleu-1")
    add_items(
        study=scored_study,
        question=fluency,
        items=[Item("hred", ratings=[r], scores={bleu.text: r / 10}) for r in (1, 3, 5, 4)],
    )
    default_page = report_page(client, _report_url(scored_study))
    assert 'id="question-select"' in default_page.content.decode()
    assert default_page.context["question"].name == "appropriateness"
    fluency_page = report_page(client, _report_url(scored_study, question="fluency"))
    assert fluency_page.context["question"] == fluency
    assert {row["question"] for row in fluency_page.context["report"]["rows"]} == {"fluency"}
    assert bleu.text in fluency_page.content.decode()
    assert report_page(client, _report_url(scored_study, question="nope")).status_code == 404


def test_downloads_hold_the_report_rows(client, scored_study) -> None:
    client.force_login(scored_study.owner)
    expected = report_document(scored_study, resamples=1000)["rows"]

    json_response = report_get(client, reverse("correlation:study-report-json", args=[scored_study.pk]))
    assert json_response["Content-Type"].startswith("application/json")
    assert "attachment" in json_response["Content-Disposition"]
    assert_same_numbers(json.loads(json_response.content), expected)

    csv_response = report_get(
        client, reverse("correlation:study-report-csv", args=[scored_study.pk]) + "?question=appropriateness"
    )
    assert csv_response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(csv_response.content.decode())))
    assert [row["metric"] for row in rows] == [row["metric"] for row in expected]
    assert float(rows[0]["pearson_ci_low"]) == pytest.approx(expected[0]["pearson_ci"][0])
    assert float(rows[1]["spearman_ci_high"]) == pytest.approx(expected[1]["spearman_ci"][1])


def test_a_cached_page_costs_the_same_queries_for_a_bigger_study(client, scored_study) -> None:
    client.force_login(scored_study.owner)
    report_page(client, _report_url(scored_study))  # warm the session and compute the report
    with CaptureQueriesContext(connection) as small:
        assert report_page(client, _report_url(scored_study)).status_code == 200
    question = scored_study.questions.get()
    texts = [row["signature"] for row in report_document(scored_study)["rows"]]
    add_items(
        study=scored_study,
        question=question,
        items=[Item(f"sys{i % 3}", ratings=[i % 3], scores=dict.fromkeys(texts, i / 50)) for i in range(50)],
    )
    assert report_page(client, _report_url(scored_study)).status_code == 200  # computes the new version
    with CaptureQueriesContext(connection) as big:
        assert report_page(client, _report_url(scored_study)).status_code == 200
    assert len(big.captured_queries) == len(small.captured_queries)


def test_a_new_code_version_recomputes_instead_of_serving_what_older_code_stored(
    client, scored_study, monkeypatch
) -> None:
    from correlation.models import ReportSnapshot
    from correlation.report import cache as report_cache

    client.force_login(scored_study.owner)
    report_page(client, _report_url(scored_study))
    [old] = ReportSnapshot.objects.filter(study=scored_study)
    monkeypatch.setattr(report_cache, "code_version", lambda: "9.9.9+git.deployed")
    report_page(client, _report_url(scored_study))
    [new] = ReportSnapshot.objects.filter(study=scored_study)  # the old code's snapshot is dropped
    assert new.pk != old.pk
    assert "code=9.9.9+git.deployed" in new.options_key
    assert new.data_version == old.data_version


def test_a_worker_on_other_code_than_the_web_keeps_the_snapshot_it_finished(
    scored_study, monkeypatch
) -> None:
    """During a deploy (or with a checkout changed under a running worker) the web names a snapshot by its
    code and the worker runs other code. The worker once pruned by its own code's key, deleted the snapshot
    it had just finished, and the page made and queued another at every poll, forever (found as 4,600
    queued builds in one test). It keeps the finished snapshot, drops what other code finished before,
    and leaves another code's snapshot in flight alone."""
    from correlation.models import ReportSnapshot, SnapshotStatus
    from correlation.report import cache as report_cache
    from stats.report.builder import DOCUMENT_VERSION
    from stats.report.types import ReportOptions

    options = ReportOptions(resamples=0)
    version = report_cache.study_version(study=scored_study)

    def snapshot(code: str, status: str) -> ReportSnapshot:
        key = f"{options.key};code={code};document={DOCUMENT_VERSION}"
        return ReportSnapshot.objects.create(
            study=scored_study, options_key=key, data_version=version, status=status
        )

    earlier = snapshot("0.0.1+git.earlier", SnapshotStatus.READY)
    elsewhere = snapshot("0.0.2+git.elsewhere", SnapshotStatus.PENDING)
    wanted = snapshot("9.9.9+git.web", SnapshotStatus.PENDING)
    monkeypatch.setattr(report_cache, "code_version", lambda: "1.0.0+git.worker")

    built = report_cache.report_snapshot_build(snapshot_id=wanted.pk)

    assert built is not None
    assert (built.pk, built.status) == (wanted.pk, SnapshotStatus.READY)
    assert set(ReportSnapshot.objects.filter(study=scored_study).values_list("pk", flat=True)) == {
        wanted.pk,
        elsewhere.pk,
    }
    assert not ReportSnapshot.objects.filter(pk=earlier.pk).exists()


def test_a_server_without_a_browser_says_why_a_figure_cannot_be_rendered(
    client, scored_study, monkeypatch
) -> None:
    monkeypatch.setenv("BROWSER_PATH", "/nonexistent/chromium")
    client.force_login(scored_study.owner)
    response = report_get(client, reverse("correlation:figure-png", args=[scored_study.pk, "quantiles"]))
    assert response.status_code == 503
    assert "cannot render figures" in response.content.decode()
    missing = client.get(reverse("correlation:figure-png", args=[scored_study.pk, "no-such-figure"]))
    assert missing.status_code == 404
