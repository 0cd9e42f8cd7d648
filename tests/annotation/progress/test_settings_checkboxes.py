"""The checkboxes of the annotation settings form: a POST that lacks a box and its hidden
``<name>_present`` marker (a page rendered before the box existed, a client posting only what it changes)
keeps the study's current value; a box unticked on the current page still turns the setting off; a ticked
box turns it on. Every checkbox of the form is treated alike (annotation/form_checkboxes.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from annotation.form_checkboxes import MarkedCheckboxInput
from annotation.models import Study
from annotation.progress.forms import AnnotationSettingsForm
from tests.annotation.work_builders import work_study
from tests.form_posts import form_values

pytestmark = pytest.mark.django_db

BOXES = (
    "rating_enabled",
    "count_imported_ratings",
    "show_reference",
    "diversity_enabled",
    "pairwise_enabled",
    "invites_open",
    "signup_open",
)


def _owner(study: Study) -> Client:
    client = Client()
    client.force_login(study.owner)
    return client


def _page(client: Client, study: Study) -> tuple[str, dict[str, Any]]:
    """The annotation page's HTML and what its settings form posts back as rendered."""
    page = client.get(f"/studies/{study.pk}/annotation/")
    assert page.status_code == 200
    return page.content.decode(), form_values(page.context["settings_form"])


def _save(client: Client, study: Study, values: dict[str, Any]) -> int:
    status = client.post(f"/studies/{study.pk}/annotation/settings/", values).status_code
    study.refresh_from_db()
    return status


def _box_tag(html: str, name: str) -> str:
    [tag] = re.findall(rf'<input type="checkbox" name="settings-{name}"[^>]*>', html)
    return tag


def _all_on(study: Study) -> None:
    Study.objects.filter(pk=study.pk).update(**dict.fromkeys(BOXES, True))
    study.refresh_from_db()


def test_every_checkbox_of_the_form_is_marked_and_the_page_renders_the_markers() -> None:
    boxes = {
        name
        for name, field in AnnotationSettingsForm.base_fields.items()
        if getattr(field.widget, "input_type", "") == "checkbox"
    }
    assert boxes == set(BOXES)
    assert all(
        isinstance(AnnotationSettingsForm.base_fields[name].widget, MarkedCheckboxInput) for name in BOXES
    )
    study = work_study(contexts=1)
    html, _ = _page(_owner(study), study)
    for name in BOXES:
        _box_tag(html, name)
        assert f'<input type="hidden" name="settings-{name}_present" value="1">' in html


@pytest.mark.parametrize("name", BOXES)
def test_a_post_without_the_box_keeps_the_current_value(name: str) -> None:
    study = work_study(contexts=1, systems=2)
    _all_on(study)
    client = _owner(study)
    _, values = _page(client, study)
    values.pop(f"settings-{name}")
    values.pop(f"settings-{name}_present")  # as a page rendered before the box existed
    values["settings-ratings_per_item"] = "4"  # the change this post is for

    assert _save(client, study, values) == 302
    assert study.ratings_per_item == 4
    assert getattr(study, name) is True


def test_a_post_without_the_box_keeps_false_too() -> None:
    study = work_study(contexts=1)
    Study.objects.filter(pk=study.pk).update(signup_open=False)
    client = _owner(study)
    _, values = _page(client, study)
    values.pop("settings-signup_open_present")
    values["settings-signup_open"] = "on"  # an old page with the box ticked still turns it on
    assert _save(client, study, values) == 302
    assert study.signup_open is True
    Study.objects.filter(pk=study.pk).update(signup_open=False)
    values.pop("settings-signup_open")
    assert _save(client, study, values) == 302
    assert study.signup_open is False


@pytest.mark.parametrize("name", BOXES)
def test_a_box_unticked_on_the_current_page_turns_the_setting_off(name: str) -> None:
    study = work_study(contexts=1, systems=2)
    _all_on(study)  # so that turning any one task off leaves another on
    client = _owner(study)
    html, values = _page(client, study)
    assert "checked" in _box_tag(html, name)
    values.pop(f"settings-{name}")  # unticked: the box posts nothing, its marker still comes

    assert _save(client, study, values) == 302
    assert getattr(study, name) is False
    html, _ = _page(client, study)
    assert "checked" not in _box_tag(html, name)


@pytest.mark.parametrize("name", BOXES)
def test_a_box_ticked_on_the_current_page_turns_the_setting_on(name: str) -> None:
    study = work_study(contexts=1, systems=2)
    others = {box: box == "rating_enabled" for box in BOXES if box != name}
    if name == "rating_enabled":
        others["pairwise_enabled"] = True  # some task must stay on
    Study.objects.filter(pk=study.pk).update(**others, **{name: False})
    client = _owner(study)
    html, values = _page(client, study)
    assert "checked" not in _box_tag(html, name)
    values[f"settings-{name}"] = "on"

    assert _save(client, study, values) == 302
    assert getattr(study, name) is True


def test_a_refused_post_without_the_box_shows_the_kept_value() -> None:
    study = work_study(contexts=1)
    assert study.signup_open
    client = _owner(study)
    _, values = _page(client, study)
    values.pop("settings-signup_open")
    values.pop("settings-signup_open_present")
    values["settings-ratings_per_item"] = "0"

    refused = client.post(f"/studies/{study.pk}/annotation/settings/", values)

    assert refused.status_code == 400
    assert "checked" in _box_tag(refused.content.decode(), "signup_open")  # not silently unticked
    study.refresh_from_db()
    assert study.signup_open
