"""Scales a volunteer can rate by keys (when the tool was tried for real): ordinal scales stop at
eleven points (form, API, database), wider ranges are sliders rated on the page and by the API, and a
ten-point scale has a key for every point."""

from __future__ import annotations

import re

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Assignment, Question, Rating
from annotation.scales import question_specs_from_text, scale_problem
from annotation.services.studies import study_create
from tests.annotation.work_builders import work_study
from tests.api.work_api_support import members
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db


def test_ordinal_scales_stop_at_eleven_points_and_wider_ones_are_sliders() -> None:
    assert scale_problem(0, 10) is None
    assert "at most 11" in (scale_problem(1, 100) or "")
    assert scale_problem(0, 100, "slider") is None
    (slider,) = question_specs_from_text("overall 0-100 slider bad / excellent")
    assert (slider.kind, slider.labels) == ("slider", ("bad", "excellent"))
    with pytest.raises(ValueError, match=r"line 1: .*use a slider"):
        question_specs_from_text("overall 1-100")
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="q", scale="0-2")
    with pytest.raises(IntegrityError), transaction.atomic():
        Question.objects.create(study=study, name="wide", scale_min=1, scale_max=100)


def test_the_api_refuses_a_hundred_point_ordinal_question_and_takes_a_slider() -> None:
    client = APIClient()
    client.force_authenticate(ResearcherFactory.create())
    wide = {"name": "wide", "questions": [{"name": "overall", "scale_min": 1, "scale_max": 100}]}
    refused = client.post("/api/studies/", wide, format="json")
    assert refused.status_code == 400
    assert "use a slider" in str(refused.json())
    slider = {"name": "slider", "questions": [{"name": "overall", "scale_min": 0, "scale_max": 100,
                                              "kind": "slider", "labels": ["bad", "excellent"]}]}  # fmt: skip
    assert client.post("/api/studies/", slider, format="json").status_code == 201
    assert Question.objects.get(study__name="slider").kind == "slider"


def test_a_slider_question_is_rated_on_the_page_and_by_the_api() -> None:
    study = work_study(contexts=2, systems=1, k=1)
    Question.objects.filter(study=study).update(
        kind="slider", scale_min=0, scale_max=100, labels=["bad", "good"]
    )
    (member,) = members(study, 1)
    client = Client()
    client.force_login(member.user)
    page = client.get(f"/work/{study.pk}/rate/").content.decode()
    assert 'type="range"' in page
    assert 'name="q-appropriateness"' in page
    assert 'type="number"' in page
    held = Assignment.objects.get(annotator=member.annotator)
    missing = client.post(f"/work/{study.pk}/rate/{held.pk}/", {"q-appropriateness": ""})
    assert missing.status_code == 400
    client.post(f"/work/{study.pk}/rate/{held.pk}/", {"q-appropriateness": "73"})
    assert Rating.objects.get(annotator=member.annotator).value == 73
    item = member.next(study).json()
    assert item["questions"][0]["kind"] == "slider"
    assert item["questions"][0]["ends"] == ["bad", "good"]
    refused = member.post(study, item["assignment"], "rating", {"values": {"appropriateness": 101}})
    assert refused.status_code == 400


def test_a_ten_point_scale_gets_keys_for_every_point() -> None:
    study = work_study(contexts=1, systems=1, k=1)
    Question.objects.filter(study=study).update(scale_min=0, scale_max=10, labels=[])
    (member,) = members(study, 1)
    client = Client()
    client.force_login(member.user)
    page = client.get(f"/work/{study.pk}/rate/").content.decode()
    keys = re.findall(r'data-key="(\d+)"', page)
    assert keys == [str(value) for value in range(11)]
