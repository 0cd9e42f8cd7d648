"""The study page's "Metric scores computed elsewhere" section and its REST API: researchers
import and delete on their own studies only (404 for another researcher's, 403 for a non-researcher),
CSRF stays on, a rejected import's problems are shown escaped and change nothing; and the run summary
counts replies and metrics, not scores."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Study
from scoring.models import MetricScore, MetricSignature
from scoring.services import scoring_run_create, scoring_run_execute
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResearcherFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

HOSTILE = '<img src=x onerror="alert(1)">'


@pytest.fixture
def study(researcher) -> Study:
    study = StudyFactory.create(owner=researcher, name="page study")
    system = SystemFactory.create(study=study, name="hred")
    for index in range(3):
        context = DialogContextFactory.create(study=study, external_id=f"c{index}")
        ReferenceFactory.create(context=context)
        ResponseFactory.create(context=context, system=system, external_id=f"r{index}", text=f"reply {index}")
    return study


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def upload(text: str, name: str = "usr.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode("utf-8"), content_type="text/csv")


GOOD = "reply_id,metric,value\nr0,usr,0.1\nr1,usr,0.2\nr2,usr,0.3\n"


def test_the_study_page_shows_the_import_form(researcher, study) -> None:
    page = logged_in(researcher).get(f"/studies/{study.pk}/")
    html = page.content.decode()
    assert 'id="external-scores-form"' in html
    assert f'action="/scoring/studies/{study.pk}/metric-scores/"' in html
    assert 'enctype="multipart/form-data"' in html


def test_a_researcher_imports_scores_on_the_page_and_sees_them_listed(researcher, study) -> None:
    client = logged_in(researcher)
    response = client.post(f"/scoring/studies/{study.pk}/metric-scores/", {"file": upload(GOOD)})
    assert response.status_code == 302
    assert response["Location"] == f"/studies/{study.pk}/#external-scores"
    assert MetricScore.objects.filter(signature__text="usr|origin:external").count() == 3
    html = client.get(f"/studies/{study.pk}/").content.decode()
    assert "Imported usr.csv: usr (external): 3 replies" in html
    assert 'class="external-metric"' in html
    assert "<code>usr|origin:external</code>" in html


def test_a_rejected_upload_shows_every_problem_escaped_and_changes_nothing(researcher, study) -> None:
    client = logged_in(researcher)
    bad = f"reply_id,metric,value\n{HOSTILE},usr,0.1\nr1,usr,high\n"
    client.post(f"/scoring/studies/{study.pk}/metric-scores/", {"file": upload(bad, name="bad.csv")})
    html = client.get(f"/studies/{study.pk}/").content.decode()
    assert 'id="external-scores-errors"' in html
    assert 'id="external-scores-rejected"' in html  # a heading above the problems, not one of them
    assert "<li>The import was rejected" not in html
    assert "bad.csv, line 2, field &quot;reply_id&quot;" in html
    assert "bad.csv, line 3, field &quot;value&quot;: &quot;high&quot; is not a number" in html
    assert HOSTILE not in html
    assert "&lt;img src=x" in html
    assert not MetricScore.objects.exists()
    # shown once: the next view of the page no longer has them
    assert 'id="external-scores-errors"' not in client.get(f"/studies/{study.pk}/").content.decode()


def test_another_researcher_gets_404_and_an_annotator_403(study) -> None:
    other = logged_in(ResearcherFactory.create(username="bob"))
    assert (
        other.post(f"/scoring/studies/{study.pk}/metric-scores/", {"file": upload(GOOD)}).status_code == 404
    )
    annotator = logged_in(UserFactory.create(username="volunteer"))
    assert (
        annotator.post(f"/scoring/studies/{study.pk}/metric-scores/", {"file": upload(GOOD)}).status_code
        == 403
    )
    assert not MetricScore.objects.exists()


def test_the_page_form_needs_its_csrf_token(researcher, study) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert (
        client.post(f"/scoring/studies/{study.pk}/metric-scores/", {"file": upload(GOOD)}).status_code == 403
    )
    assert not MetricScore.objects.exists()


def test_deleting_on_the_page_needs_the_confirmation(researcher, study) -> None:
    client = logged_in(researcher)
    client.post(f"/scoring/studies/{study.pk}/metric-scores/", {"file": upload(GOOD)})
    signature = MetricSignature.objects.get(text="usr|origin:external")
    url = f"/scoring/studies/{study.pk}/metric-scores/{signature.pk}/delete/"
    assert f'action="{url}"' in client.get(f"/studies/{study.pk}/").content.decode()
    client.post(url, {})
    assert MetricScore.objects.filter(signature=signature).count() == 3
    assert (
        logged_in(ResearcherFactory.create(username="bob")).post(url, {"confirm": "yes"}).status_code == 404
    )
    assert MetricScore.objects.filter(signature=signature).count() == 3
    client.post(url, {"confirm": "yes"})
    assert not MetricScore.objects.filter(signature__text="usr|origin:external").exists()


def test_the_api_imports_lists_and_deletes(researcher, study) -> None:
    api = APIClient()
    api.force_authenticate(researcher)
    url = f"/api/studies/{study.pk}/metric-scores/"
    created = api.post(url, {"file": upload(GOOD), "format": "csv"}, format="multipart")
    assert created.status_code == 201, created.content
    (metric,) = created.json()["metrics"]
    assert (metric["metric"], metric["label"], metric["replies"], metric["replaced"]) == (
        "usr",
        "usr (external)",
        3,
        0,
    )
    assert api.get(url).json() == [
        {
            "signature_id": metric["signature_id"],
            "metric": "usr",
            "label": "usr (external)",
            "signature": "usr|origin:external",
            "replies": 3,
        }
    ]
    rejected = api.post(url, {"file": upload("reply_id,metric,value\nr9,usr,1\n")}, format="multipart")
    assert rejected.status_code == 400
    assert rejected.json()["problems"] == [
        {
            "file": "usr.csv",
            "line": 2,
            "field": "reply_id",
            "message": rejected.json()["problems"][0]["message"],
        }
    ]
    assert 'no reply of this study has the id "r9"' in rejected.json()["problems"][0]["message"]
    deleted = api.delete(f"{url}{metric['signature_id']}/")
    assert deleted.status_code == 200
    assert deleted.json() == {"deleted": 3}
    assert api.delete(f"{url}{metric['signature_id']}/").status_code == 404
    assert api.get(url).json() == []


def test_the_api_hides_other_researchers_studies(study) -> None:
    api = APIClient()
    api.force_authenticate(ResearcherFactory.create(username="bob"))
    url = f"/api/studies/{study.pk}/metric-scores/"
    assert api.get(url).status_code == 404
    assert api.post(url, {"file": upload(GOOD)}, format="multipart").status_code == 404
    assert not MetricScore.objects.exists()


def test_the_run_summary_counts_replies_and_metrics(researcher, study) -> None:
    run = scoring_run_create(study=study, metrics=["bleu-1", "bleu-2", "distinct-1"], enqueue=False)
    scoring_run_execute(run_id=run.pk)
    html = logged_in(researcher).get(f"/studies/{study.pk}/").content.decode()
    assert '<div class="muted run-scope">3 replies × 2 metrics + 1 system-level metric</div>' in html
    api = APIClient()
    api.force_authenticate(researcher)
    scope = api.get(f"/api/scoring-runs/{run.pk}/").json()["scope"]
    assert scope == {
        "replies": 3,
        "metrics": 2,
        "system_metrics": 1,
        "text": "3 replies × 2 metrics + 1 system-level metric",
    }
    assert api.get(f"/api/studies/{study.pk}/scoring-runs/").json()[0]["scope"] == scope
