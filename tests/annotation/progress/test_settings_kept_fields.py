"""The optional text and number fields of the annotation settings form: a POST that lacks a
field's key entirely (a page rendered before the field existed, a client posting only what it changes)
keeps the study's current value; a key posted empty clears the field or brings its default back, as
before. Required fields missing from a POST are still refused, naming the field. The same mechanism as the
checkboxes' (annotation/form_checkboxes.py, tests/annotation/progress/test_settings_checkboxes.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import models
from django.test import Client

from annotation.form_checkboxes import MarkedCheckboxInput
from annotation.models import Study
from annotation.progress.forms import AnnotationSettingsForm
from tests.annotation.work_builders import work_study
from tests.form_posts import form_values

pytestmark = pytest.mark.django_db


def _default(name: str) -> Any:
    field = Study._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field.get_default()


# field: (a current value that is not the default, the value after a POST with the key empty)
FIELDS: dict[str, tuple[Any, Any]] = {
    "instructions": ("Judge the reply, not its spelling.", ""),
    "pairwise_prompt": ("Which reply is kinder?", _default("pairwise_prompt")),
    "max_items_per_annotator": (7, None),
    "kappa_threshold": (0.35, None),
    "consent_text": ("You may stop at any time.", ""),
    "crowd_id_parameter": ("PROLIFIC_PID", ""),
    "completion_code": ("ABC123", ""),
    "qualification_threshold": (0.6, _default("qualification_threshold")),
}


def _owner(study: Study) -> Client:
    client = Client()
    client.force_login(study.owner)
    return client


def _study_with_every_field_set() -> Study:
    study = work_study(contexts=1, systems=2)
    Study.objects.filter(pk=study.pk).update(**{name: current for name, (current, _) in FIELDS.items()})
    study.refresh_from_db()
    return study


def _page_values(client: Client, study: Study) -> dict[str, Any]:
    page = client.get(f"/studies/{study.pk}/annotation/")
    assert page.status_code == 200
    values = form_values(page.context["settings_form"])
    assert all(f"settings-{name}" in values for name in FIELDS)  # the page posts every one of them
    return values


def _save(client: Client, study: Study, values: dict[str, Any]) -> int:
    status = client.post(f"/studies/{study.pk}/annotation/settings/", values).status_code
    study.refresh_from_db()
    return status


def test_the_fields_here_are_every_optional_field_of_the_form_but_the_checkboxes() -> None:
    optional = {
        name
        for name, field in AnnotationSettingsForm.base_fields.items()
        if not field.required and not isinstance(field.widget, MarkedCheckboxInput)
    }
    assert optional == set(FIELDS)
    assert all(current != cleared for current, cleared in FIELDS.values())  # each test can fail


@pytest.mark.parametrize("name", FIELDS)
def test_a_post_without_the_key_keeps_the_current_value(name: str) -> None:
    study = _study_with_every_field_set()
    client = _owner(study)
    values = _page_values(client, study)
    del values[f"settings-{name}"]  # as a page rendered before the field existed
    values["settings-ratings_per_item"] = "4"  # the change this post is for

    assert _save(client, study, values) == 302
    assert study.ratings_per_item == 4
    assert getattr(study, name) == FIELDS[name][0]


def test_a_post_with_only_the_required_fields_keeps_every_optional_one() -> None:
    study = _study_with_every_field_set()
    client = _owner(study)
    values = {
        key: value
        for key, value in _page_values(client, study).items()
        if key.removeprefix("settings-") not in FIELDS
    }
    assert _save(client, study, values) == 302
    assert {name: getattr(study, name) for name in FIELDS} == {
        name: current for name, (current, _) in FIELDS.items()
    }


@pytest.mark.parametrize("name", FIELDS)
def test_a_key_posted_empty_clears_the_field_or_brings_its_default_back(name: str) -> None:
    study = _study_with_every_field_set()
    client = _owner(study)
    values = _page_values(client, study)
    values[f"settings-{name}"] = ""  # an emptied box still posts its key

    assert _save(client, study, values) == 302
    assert getattr(study, name) == FIELDS[name][1]
    others = {other: getattr(study, other) for other in FIELDS if other != name}
    assert others == {other: FIELDS[other][0] for other in others}


def test_a_required_field_missing_from_the_post_is_refused_with_its_name() -> None:
    study = _study_with_every_field_set()
    client = _owner(study)
    values = _page_values(client, study)
    del values["settings-ratings_per_item"]
    values["settings-completion_code"] = "NEW-CODE"

    refused = client.post(f"/studies/{study.pk}/annotation/settings/", values)

    assert refused.status_code == 400
    assert refused.context["settings_form"].errors["ratings_per_item"] == ["This field is required."]
    study.refresh_from_db()
    assert study.completion_code == "ABC123"


def test_a_refused_post_without_a_key_shows_the_kept_value_not_an_empty_box() -> None:
    study = _study_with_every_field_set()
    client = _owner(study)
    values = _page_values(client, study)
    del values["settings-consent_text"]
    del values["settings-max_items_per_annotator"]
    values["settings-ratings_per_item"] = "0"

    refused = client.post(f"/studies/{study.pk}/annotation/settings/", values)

    assert refused.status_code == 400
    html = refused.content.decode()
    assert "You may stop at any time.</textarea>" in html
    assert 'name="settings-max_items_per_annotator" value="7"' in html
    study.refresh_from_db()
    assert (study.ratings_per_item, study.consent_text) == (2, "You may stop at any time.")


def test_the_form_keeps_omitted_values_for_a_plain_dict_too() -> None:
    """What a caller outside a request passes (the data is copied, never changed in place)."""
    study = _study_with_every_field_set()
    data = {
        key: value
        for key, value in form_values(AnnotationSettingsForm.for_study(study)).items()
        if key not in ("settings-kappa_threshold", "settings-instructions")
    }
    posted = dict(data)
    form = AnnotationSettingsForm.for_study(study, data=data)

    assert form.is_valid(), form.errors
    settings = form.annotation_settings()
    assert (settings.kappa_threshold, settings.instructions) == (0.35, "Judge the reply, not its spelling.")
    assert data == posted
