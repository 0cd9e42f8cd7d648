"""The run form's tokenizer choice on the study page: shown, validated, and passed to the run."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.services.studies import study_create
from scoring.models import ScoringRun
from scoring.runs.forms import ScoringRunForm
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("posted", "cleaned"), [("none", "none"), ("default", "default"), (None, "default")])
def test_the_form_takes_a_tokenizer_and_defaults_to_the_languages_own(
    posted: str | None, cleaned: str
) -> None:
    data = {"metrics": ["bleu-1"], "references": "single"}
    if posted is not None:
        data["tokenizer"] = posted
    form = ScoringRunForm(data)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["tokenizer"] == cleaned


def test_the_form_refuses_an_unknown_tokenizer_on_its_field() -> None:
    form = ScoringRunForm({"metrics": ["bleu-1"], "references": "single", "tokenizer": "13a"})
    assert not form.is_valid()
    assert list(form.errors) == ["tokenizer"]
    assert "13a is not one of the available choices" in form.errors["tokenizer"][0]


def _researcher_study() -> tuple[Client, int]:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="tokenized", scale="0-2")
    client = Client()
    client.force_login(owner)
    return client, study.pk


def test_the_study_page_offers_the_tokenizer_choice() -> None:
    client, study_id = _researcher_study()
    page = client.get(f"/studies/{study_id}/").content.decode()
    assert 'name="tokenizer" value="default"' in page
    assert 'name="tokenizer" value="none"' in page
    assert "tok:none" in page


def test_a_run_started_from_the_page_records_the_tokenizer(django_capture_on_commit_callbacks) -> None:
    client, study_id = _researcher_study()
    with django_capture_on_commit_callbacks():
        response = client.post(
            f"/scoring/studies/{study_id}/runs/",
            {"metrics": ["bleu-1"], "references": "single", "tokenizer": "none"},
        )
    assert response.status_code == 302
    assert ScoringRun.objects.get().tokenizer == "none"
    page = client.get(f"/studies/{study_id}/").content.decode()
    assert "tok:none</div>" in page  # the runs table says which tokenizer the run used


def test_an_unknown_tokenizer_from_the_page_names_the_field_and_starts_nothing() -> None:
    client, study_id = _researcher_study()
    response = client.post(
        f"/scoring/studies/{study_id}/runs/",
        {"metrics": ["bleu-1"], "references": "single", "tokenizer": "13a"},
        follow=True,
    )
    assert ScoringRun.objects.count() == 0
    messages = [str(message) for message in response.context["messages"]]
    assert any(message.startswith("tokenizer: ") and "13a" in message for message in messages), messages
