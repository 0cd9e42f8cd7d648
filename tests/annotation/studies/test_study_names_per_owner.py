"""Study names are unique per owner, not across researchers (when the tool was tried for real):
two researchers may both have a "Pilot" (page and API), and a command given a name two studies share asks
for the id."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Study
from annotation.services.studies import study_create
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db


def test_two_researchers_may_both_call_a_study_pilot() -> None:
    alice, bob = ResearcherFactory.create(), ResearcherFactory.create()
    study_create(owner=alice, name="Pilot")
    client = Client()
    client.force_login(bob)
    response = client.post("/studies/new/", {"name": "Pilot", "language": "en", "scale": "0-2",
                                             "ratings_per_item": 3})  # fmt: skip
    assert response.status_code == 302
    assert Study.objects.filter(name="Pilot").count() == 2
    again = client.post("/studies/new/", {"name": "Pilot", "language": "en", "scale": "0-2",
                                          "ratings_per_item": 3})  # fmt: skip
    assert again.status_code == 200
    assert "You already have a study with this name" in again.content.decode()

    api = APIClient()
    api.force_authenticate(alice)
    assert api.post("/api/studies/", {"name": "Pilot"}, format="json").status_code == 400
    carol = APIClient()
    carol.force_authenticate(ResearcherFactory.create())
    assert carol.post("/api/studies/", {"name": "Pilot"}, format="json").status_code == 201


def test_a_command_given_an_ambiguous_name_asks_for_the_id() -> None:
    alice, bob = ResearcherFactory.create(), ResearcherFactory.create()
    study_create(owner=alice, name="Pilot")
    bobs = study_create(owner=bob, name="Pilot")
    with pytest.raises(CommandError, match="2 studies are named 'Pilot'"):
        call_command("study_report", "Pilot")
    with pytest.raises(CommandError, match="2 studies are named 'Pilot'"):
        call_command("export_annotations", "Pilot")
    from annotation.selectors.studies import study_by_name_or_id

    assert study_by_name_or_id(str(bobs.pk)) == bobs
    assert study_by_name_or_id("Pilot", owner=bob.username) == bobs
