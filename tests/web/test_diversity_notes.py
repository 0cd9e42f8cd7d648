"""A note on a diversity item (one system's replies to a context) is kept with that
system: the researcher's item browser shows it on that system's replies to the conversation only, not on
the other systems' replies to the same context, and the flagged filter lists only those."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, ItemNote, Response, Study, System
from annotation.services.work_items import work_items_sync
from tests.annotation.work_builders import first_context, web_member, work_study
from tests.factories import ResponseFactory

pytestmark = pytest.mark.django_db


def _diversity_study() -> Study:
    """One context, two systems with three sampled replies each: two diversity items, k = 1."""
    study = work_study(contexts=1, systems=2, k=1, rating_enabled=False, diversity_enabled=True)
    context = first_context(study)
    for system in System.objects.filter(study=study):
        for sample in (1, 2):
            ResponseFactory.create(
                context=context, system=system, sample_index=sample, text=f"{system.name} sample {sample}"
            )
    work_items_sync(study=study)
    return study


def test_a_diversity_note_is_on_the_judged_systems_replies_only() -> None:
    study = _diversity_study()
    annotator, client = web_member(study)
    client.get(reverse("work:next", args=[study.pk, "diversity"]))
    assignment = Assignment.objects.get(annotator=annotator)
    item = assignment.item
    assert item.kind == "diversity"
    answer = client.post(
        reverse("work:note", args=[study.pk, "diversity", assignment.pk]),
        {"kind": "flag", "reason": "offensive", "text": "sample 2 is rude"},
    )
    assert answer.status_code == 302

    note = ItemNote.objects.get()
    assert (note.context_id, note.system_id, note.response_id) == (item.context_id, item.system_id, None)
    owner = Client()
    owner.force_login(study.owner)
    items_url = reverse("annotation:study-items", args=[study.pk])
    judged = set(
        Response.objects.filter(context=item.context, system=item.system).values_list("pk", flat=True)
    )

    flagged = owner.get(items_url, {"flagged": "on"})
    every = owner.get(items_url).context["listing"].rows

    assert {row.response_id for row in flagged.context["listing"].rows} == judged
    assert len(judged) == 3
    assert len(every) == 6
    for row in every:
        shown = [(note.kind, note.on_conversation, note.on_system_replies) for note in row.notes]
        assert shown == ([("flag", False, True)] if row.response_id in judged else [])
    assert flagged.content.decode().count("(on this system's replies to the conversation)") == 3
