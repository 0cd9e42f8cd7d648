"""Annotators who joined a study through its invite token, each with an API client of their own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.models import Annotator, Response, Study, System
from annotation.services.annotators import annotator_join
from annotation.services.joining import annotator_consent
from tests.factories import DialogContextFactory, UserFactory


@dataclass
class Member:
    user: User
    annotator: Annotator
    client: APIClient

    def next(self, study: Study, kind: str = "rate") -> Any:
        return self.client.get(f"/api/work/{study.pk}/next/", {"kind": kind})

    def post(self, study: Study, assignment: int, action: str, body: dict[str, Any] | None = None) -> Any:
        url = f"/api/work/{study.pk}/assignments/{assignment}/{action}/"
        return self.client.post(url, body or {}, format="json")

    def rate(self, study: Study, assignment: int, value: int = 1, seconds: float = 3.0) -> Any:
        return self.post(
            study, assignment, "rating", {"values": {"appropriateness": value}, "seconds": seconds}
        )


def client_for(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def members(study: Study, count: int) -> list[Member]:
    joined = []
    for _ in range(count):
        user = UserFactory.create()
        annotator = annotator_consent(annotator=annotator_join(token=study.invite_token, user=user))
        joined.append(Member(user=user, annotator=annotator, client=client_for(user)))
    return joined


def add_samples(study: Study, system_name: str = "sampler", samples: int = 3) -> list[Response]:
    """One context answered ``samples`` times by one system: a diversity item (Gupta et al. (2019) section 5.2)."""
    system = System.objects.create(study=study, name=system_name)
    context = DialogContextFactory.create(
        study=study, turns=[{"speaker": "A", "text": "what should we cook tonight ?"}]
    )
    return [
        Response.objects.create(context=context, system=system, text=f"option {index} .", sample_index=index)
        for index in range(samples)
    ]
