"""Choosing implementations from the study page's run form and through the API: recorded on the
run, shown in the runs table, refused with a clear message (and no run) when they do not fit; the metric list
names each metric's implementations, and every score row names its own.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Study
from annotation.services.studies import study_create
from scoring.metrics.implementation_choice import default_implementation
from scoring.metrics.registry import is_system_metric, metric_spec, system_metric_spec
from scoring.models import ScoringRun
from scoring.services import scoring_run_execute
from tests.factories import DialogContextFactory, ReferenceFactory, ResearcherFactory, ResponseFactory

pytestmark = pytest.mark.django_db


def _researcher_study() -> tuple[Client, Study]:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="implementations", scale="0-2")
    context = DialogContextFactory.create(study=study)
    ReferenceFactory.create(context=context, text="i am fine , thank you .", origin="original")
    ResponseFactory.create(context=context, text="I am fine, thanks.")
    client = Client()
    client.force_login(owner)
    return client, study


def _post(client: Client, study: Study, data: dict[str, Any], *, follow: bool = False) -> Any:
    return client.post(f"/scoring/studies/{study.pk}/runs/", {"references": "single", **data}, follow=follow)


def _messages(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


# --- the run form --------------------------------------------------------------------------------------------


def test_the_study_page_offers_the_implementations_and_their_options() -> None:
    client, study = _researcher_study()
    page = client.get(f"/studies/{study.pk}/").content.decode()
    assert '<select name="implementation"' in page
    for name in ("nlg-eval", "sacrebleu", "rouge-score", "nltk"):
        assert f'<option value="{name}">' in page
    assert 'name="implementation_families"' in page
    assert '<select name="option_tok"' in page
    assert '<option value="intl">' in page
    assert '<select name="option_stem"' in page
    assert '<select name="option_oov"' in page


def test_a_run_started_with_nlg_eval_records_it_and_the_page_says_so(
    django_capture_on_commit_callbacks,
) -> None:
    client, study = _researcher_study()
    with django_capture_on_commit_callbacks():
        response = _post(client, study, {"metrics": ["bleu-4", "cider-d"], "implementation": "nlg-eval"})
    assert response.status_code == 302
    run = ScoringRun.objects.get()
    assert run.implementation == "nlg-eval"
    assert run.implementations == {"bleu-4": "nlg-eval", "cider-d": "nlg-eval"}
    assert run.options == {}
    page = client.get(f"/studies/{study.pk}/").content.decode()
    assert 'class="muted run-implementation">impl:nlg-eval</div>' in page


def test_the_per_family_text_wins_over_the_select(django_capture_on_commit_callbacks) -> None:
    client, study = _researcher_study()
    with django_capture_on_commit_callbacks():
        _post(
            client,
            study,
            {
                "metrics": ["bleu-2", "meteor", "rouge-l"],
                "implementation": "nlg-eval",
                "implementation_families": "meteor=nlg-eval, bleu=sacrebleu",
            },
        )
    run = ScoringRun.objects.get()
    assert run.implementation == "bleu=sacrebleu,meteor=nlg-eval"
    assert run.implementations == {"bleu-2": "sacrebleu", "meteor": "nlg-eval", "rouge-l": "nltk"}
    page = client.get(f"/studies/{study.pk}/").content.decode()
    assert "impl:bleu=sacrebleu,meteor=nlg-eval</div>" in page


def test_an_option_from_the_form_is_recorded_and_shown(django_capture_on_commit_callbacks) -> None:
    client, study = _researcher_study()
    with django_capture_on_commit_callbacks():
        _post(
            client,
            study,
            {"metrics": ["bleu-4"], "implementation": "sacrebleu", "option_tok": "intl", "option_stem": ""},
        )
    run = ScoringRun.objects.get()
    assert run.options == {"tok": "intl"}  # a blank option is the implementation's default: not recorded
    page = client.get(f"/studies/{study.pk}/").content.decode()
    assert '<div class="muted">tok:intl</div>' in page


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"metrics": ["bleu-4"], "implementation_families": "bleu=moses"},
            "implementation: unknown implementation 'moses'",
        ),
        (
            {"metrics": ["chrf"], "implementation": "nlg-eval"},
            "implementation: chrf has no nlg-eval implementation",
        ),
        (
            {"metrics": ["bleu-4"], "option_stem": "yes"},
            "option 'stem' applies to none of the chosen metrics",
        ),
    ],
)
def test_a_choice_that_does_not_fit_shows_the_error_and_starts_nothing(data: dict, expected: str) -> None:
    client, study = _researcher_study()
    response = _post(client, study, data, follow=True)
    assert ScoringRun.objects.count() == 0
    assert any(message.startswith(expected) for message in _messages(response)), _messages(response)


def test_an_implementation_the_select_does_not_offer_is_a_field_error() -> None:
    client, study = _researcher_study()
    response = _post(client, study, {"metrics": ["bleu-4"], "implementation": "coco"}, follow=True)
    assert ScoringRun.objects.count() == 0
    assert any(
        "coco" in message and "implementation" in message.lower() for message in _messages(response)
    ), _messages(response)


# --- the API -------------------------------------------------------------------------------------------------


def _api(study: Study) -> APIClient:
    client = APIClient()
    client.force_authenticate(study.owner)
    return client


def test_the_api_takes_an_implementation_and_options_and_echoes_them() -> None:
    _, study = _researcher_study()
    client = _api(study)
    posted = client.post(
        f"/api/studies/{study.pk}/scoring-runs/",
        {"metrics": ["bleu-4", "rouge-l"], "implementation": "bleu=sacrebleu", "options": {"tok": "intl"}},
        format="json",
    )
    assert posted.status_code == 202, posted.content
    body = posted.json()
    assert body["implementation"] == "bleu=sacrebleu"
    assert body["implementations"] == {"bleu-4": "sacrebleu", "rouge-l": "nltk"}
    assert body["options"] == {"tok": "intl"}
    assert body["vectors"] == ""
    again = client.post(
        f"/api/studies/{study.pk}/scoring-runs/",
        {"metrics": ["bleu-4", "rouge-l"], "implementation": "bleu = sacrebleu", "options": {"tok": "intl"}},
        format="json",
    )
    assert again.status_code == 200
    assert again.json()["id"] == body["id"]
    assert client.get(f"/api/scoring-runs/{body['id']}/").json()["implementation"] == "bleu=sacrebleu"


@pytest.mark.parametrize(
    ("payload", "field", "expected"),
    [
        ({"implementation": "nlgeval"}, "implementation", "implementation: unknown implementation 'nlgeval'"),
        ({"implementation": "rouge-score"}, "implementation", "implementation: bleu-4 has no rouge-score"),
        ({"options": {"stem": "yes"}}, "options", "option 'stem' applies to none"),
        (
            {"implementation": "sacrebleu", "options": {"smooth": "method1"}},
            "options",
            "option smooth='method1'",
        ),
    ],
)
def test_a_bad_choice_is_a_400_naming_the_field(payload: dict, field: str, expected: str) -> None:
    _, study = _researcher_study()
    response = _api(study).post(
        f"/api/studies/{study.pk}/scoring-runs/", {"metrics": ["bleu-4"], **payload}, format="json"
    )
    assert response.status_code == 400
    body = response.json()
    assert list(body) == [field], body
    assert body[field][0].startswith(expected), body
    assert ScoringRun.objects.count() == 0


def test_the_metric_list_names_each_metrics_implementations_default_first() -> None:
    _, study = _researcher_study()
    rows = {row["name"]: row for row in _api(study).get("/api/metrics/").json()}
    for name, row in rows.items():
        spec = system_metric_spec(name) if is_system_metric(name) else metric_spec(name)
        assert set(row["implementations"]) == set(spec.implementations), name
        if spec.implementations:
            assert row["implementations"][0] == default_implementation(spec), name
            assert row["family"] == spec.group_name
        else:
            assert row["family"] == ""
    assert rows["bleu-4"]["implementations"][0] == "nltk"
    assert set(rows["bleu-4"]["implementations"]) == {"nltk", "nlg-eval", "sacrebleu"}
    assert rows["cider-d"]["implementations"] == ["nlg-eval"]
    assert rows["corpus-bleu"]["family"] == "bleu"
    assert rows["corpus-bleu"]["level"] == "system"
    assert rows["ruber-referenced"]["implementations"] == []


def test_score_rows_name_the_implementation_that_computed_them() -> None:
    _, study = _researcher_study()
    client = _api(study)
    for implementation in ("nltk", "nlg-eval"):
        posted = client.post(
            f"/api/studies/{study.pk}/scoring-runs/",
            {"metrics": ["bleu-2"], "references": "single", "implementation": implementation},
            format="json",
        )
        assert posted.status_code == 202, posted.content
        scoring_run_execute(run_id=posted.json()["id"])
    rows = client.get(f"/api/studies/{study.pk}/scores/?metric=bleu-2").json()["results"]
    assert sorted(row["implementation"] for row in rows) == ["nlg-eval", "nltk"]
    for row in rows:
        assert f"|impl:{row['implementation']}|" in row["signature"]
