"""The prompt templates' pages and API: the shipped ones listed read-only, a copy to edit, errors under
the field with their line and column, and each researcher's templates theirs alone (another's is a 404)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from scoring.judges.templates import judge_template_save
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.models import JudgeTemplate
from tests.factories import ResearcherFactory
from tests.scoring.llm_judge.studies import logged_in

pytestmark = pytest.mark.django_db

USER_TEXT = "Rate {reply} after:\n{context}"


def _mine(owner, name: str = "mine", user: str = USER_TEXT) -> JudgeTemplate:
    return judge_template_save(owner=owner, name=name, user=user, answer_prefix="Score: ")


def test_the_list_shows_the_shipped_templates_and_only_my_own() -> None:
    me, other = ResearcherFactory.create(), ResearcherFactory.create()
    _mine(me, "mine")
    _mine(other, "theirs")
    page = logged_in(me).get(reverse("scoring:judge-templates")).content.decode()
    for name, template in BUILT_IN_TEMPLATES.items():
        assert f'id="template-{name}"' in page
        assert template.content_hash() in page
    assert 'id="template-mine"' in page
    assert "theirs" not in page


def test_another_researchers_template_is_a_404_on_every_page_and_endpoint() -> None:
    me, other = ResearcherFactory.create(), ResearcherFactory.create()
    _mine(other, "theirs")
    client = logged_in(me)
    for page in ("judge-template", "judge-template-edit"):
        assert client.get(reverse(f"scoring:{page}", args=["theirs"])).status_code == 404
    assert client.post(reverse("scoring:judge-template-delete", args=["theirs"])).status_code == 404
    assert client.get(reverse("scoring:judge-template-new") + "?copy=theirs").status_code == 404
    api = APIClient()
    api.force_authenticate(me)
    assert api.get("/api/judge-templates/theirs/").status_code == 404
    assert api.put("/api/judge-templates/theirs/", {"user": "{reply}"}, format="json").status_code == 404
    assert api.delete("/api/judge-templates/theirs/").status_code == 404
    assert "theirs" not in [row["name"] for row in api.get("/api/judge-templates/").json()]
    assert JudgeTemplate.objects.get(name="theirs").user == USER_TEXT


def test_a_shipped_template_is_copied_to_edit_and_stays_read_only() -> None:
    me = ResearcherFactory.create()
    client = logged_in(me)
    page = client.get(reverse("scoring:judge-template-new") + "?copy=g-eval").content.decode()
    assert 'value="g-eval-copy"' in page
    assert "Evaluation Criteria:" in page
    shipped = BUILT_IN_TEMPLATES["g-eval"]
    posted = client.post(
        reverse("scoring:judge-template-new") + "?copy=g-eval",
        {
            "name": "my-geval",
            "system": shipped.system,
            "user": shipped.user.replace("\n", "\r\n"),  # as a browser sends a textarea
            "answer_prefix": shipped.answer_prefix,
        },
    )
    assert posted.status_code == 302
    row = JudgeTemplate.objects.get(owner=me, name="my-geval")
    assert row.user == shipped.user
    assert row.content_hash == shipped.content_hash()  # the same text, so the same hash
    assert client.get(reverse("scoring:judge-template-edit", args=["g-eval"])).status_code == 404
    api = APIClient()
    api.force_authenticate(me)
    assert api.put("/api/judge-templates/g-eval/", {"user": "{reply}"}, format="json").status_code == 403
    assert api.delete("/api/judge-templates/g-eval/").status_code == 403


def test_an_error_shows_under_its_field_with_line_and_column_and_nothing_is_saved() -> None:
    me = ResearcherFactory.create()
    client = logged_in(me)
    posted = client.post(
        reverse("scoring:judge-template-new"), {"name": "broken", "user": "Rate this:\n  {reply} {mood}"}
    )
    assert posted.status_code == 400
    page = posted.content.decode()
    assert 'id="user-errors"' in page
    assert "user, line 2, column 11: unknown placeholder {mood}" in page
    posted = client.post(reverse("scoring:judge-template-new"), {"name": "g-eval", "user": "{reply}"})
    assert 'id="name-errors"' in posted.content.decode()
    assert "is a shipped recipe" in posted.content.decode()
    _mine(me, "mine")
    posted = client.post(reverse("scoring:judge-template-new"), {"name": "mine", "user": "{reply}"})
    assert "you already have a template" in posted.content.decode()
    assert JudgeTemplate.objects.get(name="mine").user == USER_TEXT
    api = APIClient()
    api.force_authenticate(me)
    answer = api.post(
        "/api/judge-templates/",
        {"name": "broken", "user": "{reply}", "system": "About {context}"},
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "system": [
            "system, line 1, column 7: {context} belongs in the user message (the system message and answer "
            "prefix are shared by every item)"
        ]
    }
    assert not JudgeTemplate.objects.filter(name="broken").exists()


def test_my_template_is_edited_and_deleted_with_its_text_escaped() -> None:
    me = ResearcherFactory.create()
    _mine(me, "mine", user="<script>alert(1)</script> {reply}")
    client = logged_in(me)
    page = client.get(reverse("scoring:judge-template", args=["mine"])).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    posted = client.post(
        reverse("scoring:judge-template-edit", args=["mine"]),
        {"name": "renamed", "user": "Judge {reply}", "answer_prefix": "Score: "},
    )
    assert posted.status_code == 302
    assert list(JudgeTemplate.objects.values_list("name", "user")) == [
        ("mine", "Judge {reply}")
    ]  # kept its name
    assert client.post(reverse("scoring:judge-template-delete", args=["mine"])).status_code == 302
    assert not JudgeTemplate.objects.exists()


def test_the_api_creates_replaces_and_deletes_my_templates() -> None:
    me = ResearcherFactory.create()
    api = APIClient()
    api.force_authenticate(me)
    created = api.post("/api/judge-templates/", {"name": "mine", "user": "{reply}"}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["shipped"] is False
    replaced = api.put(
        "/api/judge-templates/mine/", {"user": "Now {reply}", "answer_prefix": "["}, format="json"
    )
    assert replaced.status_code == 200
    assert replaced.json()["user"] == "Now {reply}"
    assert replaced.json()["content_hash"] == JudgeTemplate.objects.get().content_hash
    names = [row["name"] for row in api.get("/api/judge-templates/").json()]
    assert names == [*BUILT_IN_TEMPLATES, "mine"]
    assert (
        api.post("/api/judge-templates/", {"name": "mine", "user": "{reply}"}, format="json").status_code
        == 400
    )
    assert api.delete("/api/judge-templates/mine/").status_code == 204
    assert api.get("/api/judge-templates/mine/").status_code == 404
    assert api.get("/api/judge-models/").json()["local_models"] == ["smollm2-135m"]
