"""The comment / flag box on the pairwise comparison page: the page has the same note
form as the other item pages, it works without JavaScript and answers JSON to static/annotation/notes.js,
the note is kept on both replies of the pair, and the researcher's item browser shows it on each of them,
naming the other reply's system (so that with three systems the researcher sees which pair it was about)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, AssignmentStatus, ItemNote, PairwiseJudgment, Study
from tests.annotation.work_builders import web_member, work_study

pytestmark = pytest.mark.django_db


def _pair_study() -> Study:
    """One context answered by two systems: one pair item, the only task."""
    return work_study(contexts=1, systems=2, k=1, rating_enabled=False, pairwise_enabled=True)


def test_the_pair_page_has_the_note_form_and_it_works_without_javascript() -> None:
    study = _pair_study()
    annotator, client = web_member(study)
    page = client.get(reverse("work:next", args=[study.pk, "pair"])).content.decode()
    assignment = Assignment.objects.get(annotator=annotator)
    assert assignment.item.kind == "pair"
    note_url = reverse("work:note", args=[study.pk, "pair", assignment.pk])
    assert 'data-pair-page="1"' in page
    assert f'action="{note_url}"' in page
    assert 'id="item-notes"' in page
    assert "annotation/notes.js" in page
    assert "<kbd>f</kbd>" in page

    answer = client.post(note_url, {"kind": "flag", "reason": "not-a-reply", "text": "both <b>off</b> topic"})

    assert answer.status_code == 302
    assert answer["Location"] == reverse("work:item", args=[study.pk, "pair", assignment.pk])
    shown = client.get(answer["Location"]).content.decode()
    assert "your flag was recorded" in shown
    assert 'data-pair-page="1"' in shown  # back on the same pair, still to answer
    note = ItemNote.objects.get()
    assert (note.kind, note.reason, note.text) == ("flag", "not-a-reply", "both <b>off</b> topic")
    item = assignment.item
    assert item.response is not None
    assert (note.response_id, note.response_b_id) == (item.response_id, item.response_b_id)  # both replies
    assert note.context_id == item.response.context_id
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE  # a note is not an answer
    assert not PairwiseJudgment.objects.exists()

    # What notes.js sends: JSON back, the page is not reloaded.
    sent = client.post(note_url, {"kind": "comment", "text": "hard to tell"}, HTTP_ACCEPT="application/json")
    assert sent.status_code == 200
    assert sent.json()["recorded"] is True
    refused = client.post(note_url, {"kind": "flag", "reason": ""}, HTTP_ACCEPT="application/json")
    assert (refused.status_code, refused.json()["field"]) == (400, "reason")
    assert ItemNote.objects.count() == 2

    # Someone else's pair is not theirs to note.
    _, intruder = web_member(study)
    assert intruder.post(note_url, {"kind": "comment", "text": "x"}).status_code == 404
    assert ItemNote.objects.count() == 2


def test_the_researcher_sees_a_pair_note_on_both_replies_of_the_pair_naming_the_other_one() -> None:
    study = _pair_study()
    annotator, client = web_member(study)
    client.get(reverse("work:next", args=[study.pk, "pair"]))
    assignment = Assignment.objects.get(annotator=annotator)
    note_url = reverse("work:note", args=[study.pk, "pair", assignment.pk])
    client.post(note_url, {"kind": "flag", "reason": "offensive", "text": "rude <script>x</script>"})
    client.post(note_url, {"kind": "comment", "text": "the A reply is cut off"})
    owner = Client()
    owner.force_login(study.owner)
    item = assignment.item
    pair = {item.response_id, item.response_b_id}
    assert item.response is not None
    assert item.response_b is not None
    other_system = {
        item.response.pk: item.response_b.system.name,
        item.response_b.pk: item.response.system.name,
    }

    flagged = owner.get(reverse("annotation:study-items", args=[study.pk]), {"flagged": "on"})
    commented = owner.get(reverse("annotation:study-items", args=[study.pk]), {"commented": "on"})

    for listing in (flagged, commented):
        assert listing.status_code == 200
        rows = listing.context["listing"].rows
        assert {row.response_id for row in rows} == pair
        for row in rows:
            assert [
                (note.kind, note.annotator, note.on_conversation, note.pair_with) for note in row.notes
            ] == [
                ("flag", annotator.pseudonym, False, other_system[row.response_id]),
                ("comment", annotator.pseudonym, False, other_system[row.response_id]),
            ]
    html = flagged.content.decode()
    assert "(on the conversation)" not in html
    assert html.count("(on the pair with bot-0)") == 2  # two notes on bot-1's reply
    assert html.count("(on the pair with bot-1)") == 2
    assert "rude &lt;script&gt;x&lt;/script&gt;" in html
    assert "<script>x</script>" not in html
    assert "the A reply is cut off" in html


def test_with_three_systems_a_pair_note_is_only_on_the_two_replies_compared() -> None:
    study = work_study(contexts=1, systems=3, k=1, rating_enabled=False, pairwise_enabled=True)
    annotator, client = web_member(study)
    client.get(reverse("work:next", args=[study.pk, "pair"]))
    assignment = Assignment.objects.get(annotator=annotator)
    item = assignment.item
    client.post(
        reverse("work:note", args=[study.pk, "pair", assignment.pk]), {"kind": "flag", "reason": "broken"}
    )
    owner = Client()
    owner.force_login(study.owner)
    items_url = reverse("annotation:study-items", args=[study.pk])

    flagged = owner.get(items_url, {"flagged": "on"}).context["listing"].rows
    every = owner.get(items_url).context["listing"].rows

    assert {row.response_id for row in flagged} == {item.response_id, item.response_b_id}
    assert len(every) == 3
    left_out = [row for row in every if row.response_id not in (item.response_id, item.response_b_id)]
    assert [row.notes for row in left_out] == [[]]  # the third system's reply was not in this comparison
    assert item.response_b is not None
    detail = owner.get(reverse("annotation:study-item", args=[study.pk, item.response_id])).content.decode()
    assert f"(on the comparison of this reply with {item.response_b.system.name}'s)" in detail
