"""Annotators' comments and flags (annotation/services/notes.py) and the researcher's adjudication of a
reply (annotation/services/adjudication.py), through to the correlation report: an excluded reply is
left out with its reason counted, a gold value replaces the mean rating, undoing brings everything back."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import (
    Adjudication,
    Assignment,
    AssignmentStatus,
    AttentionCheck,
    ItemNote,
    Response,
    Study,
    WorkItem,
    WorkKind,
)
from annotation.services.adjudication import (
    AdjudicationInvalid,
    adjudication_clear,
    adjudication_exclude,
    adjudication_set,
)
from annotation.services.assignment import next_assignment
from annotation.services.checks import check_mark, distractors_generate
from annotation.services.notes import NoteInvalid, item_note_add
from correlation.report.loading import study_human_scores
from stats.report.adjudication import Adjudications, adjudicated
from stats.report.document_types import QuestionSummary
from stats.report.types import QuestionInputs, ReportInputs, ResponseInfo
from tests.annotation.work_builders import annotators, web_member, work_study
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import report_document, report_page
from tests.factories import QuestionFactory, StudyFactory, UserFactory

pytestmark = pytest.mark.django_db


# ---- notes ----


def test_a_flag_is_stored_on_the_reply_and_does_not_move_the_queue() -> None:
    study = work_study(contexts=2, systems=1, k=2)
    [annotator] = annotators(study, 1)
    assignment = next_assignment(annotator=annotator, kind=WorkKind.RATE).assignment
    item = WorkItem.objects.get(pk=assignment.item_id)

    note = item_note_add(
        annotator=annotator, assignment_id=assignment.pk, kind="flag", reason="offensive", text=" rude <b> "
    )

    assert note is not None
    assert (note.kind, note.reason, note.text) == ("flag", "offensive", "rude <b>")
    assert note.response_id == item.response_id
    assert item.response is not None
    assert note.context_id == item.response.context_id
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE  # not an answer
    assert WorkItem.objects.get(pk=item.pk).done == item.done
    assert next_assignment(annotator=annotator, kind=WorkKind.RATE).assignment.pk == assignment.pk


def test_a_comment_on_a_writing_item_is_a_note_on_the_conversation() -> None:
    study = work_study(contexts=1, systems=1, k=1, rating_enabled=False, references_wanted=2)
    [annotator] = annotators(study, 1)
    assignment = next_assignment(annotator=annotator, kind=WorkKind.WRITE).assignment

    note = item_note_add(
        annotator=annotator, assignment_id=assignment.pk, kind="comment", text="typo in turn 2"
    )

    assert note is not None
    assert note.response_id is None
    assert note.context_id == assignment.item.context_id


def test_only_ones_own_items_can_be_noted() -> None:
    study = work_study(contexts=2, systems=1, k=2)
    owner, other = annotators(study, 2)
    assignment = next_assignment(annotator=owner, kind=WorkKind.RATE).assignment
    stranger = annotators(work_study(contexts=1, systems=1), 1)[0]

    for intruder in (other, stranger):
        with pytest.raises(Assignment.DoesNotExist):
            item_note_add(annotator=intruder, assignment_id=assignment.pk, kind="comment", text="mine now")
    assert not ItemNote.objects.exists()


@pytest.mark.parametrize(
    ("kind", "reason", "text", "field"),
    [
        ("flag", "", "", "reason"),
        ("flag", "boring", "", "reason"),
        ("comment", "", "   ", "text"),
        ("comment", "offensive", "hello", "reason"),
        ("comment", "", "x" * 2001, "text"),
        ("flag", "other", "x" * 2001, "text"),
        ("praise", "", "nice", "kind"),
    ],
)
def test_bad_notes_name_the_field_and_store_nothing(kind: str, reason: str, text: str, field: str) -> None:
    study = work_study(contexts=1, systems=1, k=1)
    [annotator] = annotators(study, 1)
    assignment = next_assignment(annotator=annotator, kind=WorkKind.RATE).assignment

    with pytest.raises(NoteInvalid) as raised:
        item_note_add(annotator=annotator, assignment_id=assignment.pk, kind=kind, reason=reason, text=text)

    assert raised.value.field == field
    assert raised.value.message
    assert not ItemNote.objects.exists()


def test_a_note_of_2000_characters_is_fine() -> None:
    study = work_study(contexts=1, systems=1, k=1)
    [annotator] = annotators(study, 1)
    assignment = next_assignment(annotator=annotator, kind=WorkKind.RATE).assignment
    note = item_note_add(annotator=annotator, assignment_id=assignment.pk, kind="comment", text="y" * 2000)
    assert note is not None
    assert len(note.text) == 2000


def test_notes_on_attention_checks_never_give_them_away() -> None:
    study = work_study(contexts=4, systems=2, k=2, check_interval=1)
    question = study.questions.get()
    marked_reply = Response.objects.filter(context__study=study).order_by("id")[0]
    marked = check_mark(study=study, response=marked_reply, question=question, expected_min=2, expected_max=2)
    [distractor] = distractors_generate(study=study, count=1, seed=3)
    [annotator] = annotators(study, 1)
    results = {}
    for check in (marked, distractor):
        item = WorkItem.objects.get(attention_check=check)
        assignment = Assignment.objects.create(item=item, annotator=annotator, sequence=item.pk)
        results[check.origin] = item_note_add(
            annotator=annotator, assignment_id=assignment.pk, kind="flag", reason="not-a-reply"
        )

    # The researcher's copy of a reply: the note is about that reply.
    marked_note = results[AttentionCheck.Origin.MARKED]
    assert marked_note is not None
    assert marked_note.response_id == marked_reply.pk
    # A reply from an unrelated dialog is not a reply of this context: confirmed to the annotator alike,
    # stored nowhere.
    assert results[AttentionCheck.Origin.DISTRACTOR] is None
    assert ItemNote.objects.count() == 1


# ---- adjudication ----


@pytest.fixture
def rated() -> tuple[Study, list]:
    """Six replies of two systems rated 0-2 by three raters, with one metric that follows the raters."""
    study = StudyFactory.create()
    question = QuestionFactory.create(study=study, name="appropriateness")
    bleu = signature("bleu-2")
    items = [
        Item("bot-a", ratings=[0, 0, 1], scores={bleu.text: 0.1}),
        Item("bot-a", ratings=[1, 1, 1], scores={bleu.text: 0.4}),
        Item("bot-a", ratings=[2, 2, 1], scores={bleu.text: 0.8}),
        Item("bot-b", ratings=[0, 1, 0], scores={bleu.text: 0.2}),
        Item("bot-b", ratings=[2, 1, 2], scores={bleu.text: 0.7}),
        Item("bot-b", ratings=[0, 2, 2], scores={bleu.text: 0.05}),  # the odd one out
    ]
    return study, add_items(study=study, question=question, items=items)


def _summary(study: Study) -> QuestionSummary:
    [summary] = report_document(study, resamples=0)["questions"]
    return summary


def test_gold_values_are_checked_against_the_scale_and_name_the_field(rated) -> None:
    study, responses = rated
    QuestionFactory.create(study=study, name="fluency", scale_min=1, scale_max=5, labels=[], position=1)
    cases = [
        ({"appropriateness": "3"}, "gold.appropriateness", "outside the scale 0-2"),
        ({"appropriateness": "-0.5"}, "gold.appropriateness", "outside the scale"),
        ({"fluency": "0"}, "gold.fluency", "outside the scale 1-5"),
        ({"fluency": "very"}, "gold.fluency", "not a number"),
        ({"fluency": "nan"}, "gold.fluency", "not a number"),
        ({"coherence": "1"}, "gold.coherence", "no such question"),
    ]
    for gold, field, words in cases:
        with pytest.raises(AdjudicationInvalid) as raised:
            adjudication_set(response=responses[0], excluded=True, gold=gold)
        assert raised.value.field == field
        assert words in raised.value.message
    with pytest.raises(AdjudicationInvalid) as raised:
        adjudication_set(response=responses[0], excluded=True, gold={}, note="n" * 2001)
    assert raised.value.field == "note"
    assert not Adjudication.objects.exists()  # nothing changed, not even the valid "excluded"

    decision = adjudication_set(
        response=responses[0],
        excluded=False,
        gold={
            "appropriateness": "1.5",
            "fluency": "5",
        },
        note=" why ",
    )
    assert decision.gold == {"appropriateness": 1.5, "fluency": 5}
    assert decision.note == "why"


def test_an_excluded_reply_is_left_out_of_the_report_and_counted(rated, committed) -> None:
    study, responses = rated
    before = _summary(study)
    assert before["responses"] == 6
    assert before["human_scored"] == 6
    assert "excluded_by_researcher" not in before["left_out"]
    version = Study.objects.get(pk=study.pk).data_version

    researcher = UserFactory.create()
    with committed():
        adjudication_exclude(response=responses[5], excluded=True, decided_by=researcher)

    assert Study.objects.get(pk=study.pk).data_version == version + 1  # cached reports recompute
    document = report_document(study, resamples=0)
    [summary] = document["questions"]
    assert summary["responses"] == 6
    assert summary["human_scored"] == 5
    assert summary["left_out"] == {"no_human_score": 0, "excluded_by_researcher": 1}
    [row] = document["rows"]
    assert row["n"] == 5
    scores = study_human_scores(study=study, questions=list(study.questions.all()))
    assert responses[5].pk not in next(iter(scores.values()))
    decision = Adjudication.objects.get(response=responses[5])
    assert decision.decided_by == researcher

    with committed():
        adjudication_clear(response=responses[5], decided_by=researcher)  # undo: back in, nothing lost
    assert Adjudication.objects.get(response=responses[5]).excluded is False
    assert _summary(study)["human_scored"] == 6
    assert report_document(study, resamples=0)["rows"][0]["n"] == 6


def test_a_gold_value_replaces_the_mean_rating(rated, committed) -> None:
    study, responses = rated
    question = study.questions.get()
    assert study_human_scores(study=study, questions=[question])[question.pk][
        responses[5].pk
    ] == pytest.approx(4 / 3)

    with committed():
        adjudication_set(response=responses[5], excluded=False, gold={"appropriateness": 0}, note="broken")

    assert study_human_scores(study=study, questions=[question])[question.pk][responses[5].pk] == 0.0
    summary = _summary(study)
    assert summary["gold_values"] == 1
    assert summary["human_scored"] == 6
    assert summary["ratings"] == 18  # the ratings themselves are kept

    with committed():
        adjudication_clear(response=responses[5])
    assert study_human_scores(study=study, questions=[question])[question.pk][
        responses[5].pk
    ] == pytest.approx(4 / 3)
    assert _summary(study)["gold_values"] == 0


def test_the_report_page_says_what_was_left_out_and_why(rated, committed) -> None:
    study, responses = rated
    client = Client()
    client.force_login(study.owner)
    url = reverse("correlation:study-report", args=[study.pk])
    assert "excluded by the researcher" not in report_page(client, url).content.decode()

    with committed():
        adjudication_exclude(response=responses[5], excluded=True)
        adjudication_set(response=responses[0], excluded=False, gold={"appropriateness": "0.5"})

    html = report_page(client, url).content.decode()  # a new data version: computed again
    assert '<span class="num" id="human-scored">5</span> of 6 responses' in html
    assert '<span id="left-out-excluded">1</span> left out: excluded by the researcher' in html
    assert '<span id="gold-values">1</span> reply with an adjudicated gold value' in html


def test_excluding_again_and_undoing_nothing_change_nothing(rated, committed) -> None:
    study, responses = rated
    assert adjudication_clear(response=responses[0]) is None
    with committed():
        adjudication_set(response=responses[0], excluded=True, gold={"appropriateness": "2"}, note="a")
    version = Study.objects.get(pk=study.pk).data_version
    with committed():
        adjudication_exclude(response=responses[0], excluded=True)  # already excluded: gold and note kept
    decision = Adjudication.objects.get(response=responses[0])
    assert (decision.excluded, decision.gold, decision.note) == (True, {"appropriateness": 2}, "a")
    assert Study.objects.get(pk=study.pk).data_version == version  # the report did not change


def test_adjudication_on_plain_inputs_without_a_database() -> None:
    """The pure half (stats/report/adjudication.py): excluded replies vanish everywhere, gold values
    outside the scale or on excluded replies are ignored."""
    inputs = ReportInputs(
        study_id=1,
        study_name="s",
        data_version=1,
        study_threshold=None,
        responses={
            1: ResponseInfo("a", "x", ""),
            2: ResponseInfo("b", "x", ""),
            3: ResponseInfo("c", "y", ""),
        },
        annotators={},
        questions=(QuestionInputs("q", 0, 2, ((7, 1, 0), (7, 2, 1), (7, 3, 2)), {3: 1.5}),),
        signatures=(),
        metric_values={9: {1: 0.1, 2: 0.2, 3: 0.3}},
    )
    result = adjudicated(
        inputs, Adjudications(excluded=frozenset({3, 99}), gold={"q": {1: 2.0, 2: 7.0, 3: 1.0}})
    )
    assert set(result.responses) == {1, 2}
    assert result.excluded_responses == frozenset({3})
    [question] = result.questions
    assert question.ratings == ((7, 1, 0), (7, 2, 1))
    assert question.imported_means == {}
    assert question.gold == {1: 2.0}
    assert result.metric_values == {9: {1: 0.1, 2: 0.2}}
    assert adjudicated(inputs, Adjudications()) is inputs


# ---- the note form on the item pages, and the API ----


def test_the_item_page_has_a_note_form_that_works_without_javascript() -> None:
    study = work_study(contexts=2, systems=1, k=2)
    annotator, client = web_member(study)
    page = client.get(reverse("work:next", args=[study.pk, "rate"]))
    assignment = Assignment.objects.get(annotator=annotator)
    note_url = reverse("work:note", args=[study.pk, "rate", assignment.pk])
    html = page.content.decode()
    assert f'action="{note_url}"' in html
    assert 'value="not-a-reply"' in html
    assert "<kbd>f</kbd>" in html

    answer = client.post(note_url, {"kind": "flag", "reason": "broken", "text": "garbled <i>"})

    assert answer.status_code == 302
    assert answer["Location"] == reverse("work:item", args=[study.pk, "rate", assignment.pk])
    shown = client.get(answer["Location"]).content.decode()
    assert "your flag was recorded" in shown
    note = ItemNote.objects.get()
    assert (note.kind, note.reason, note.text, note.response_id) == (
        "flag",
        "broken",
        "garbled <i>",
        assignment.item.response_id,
    )
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE

    # A comment sent with a reason still picked in the (flags-only) list keeps its text.
    client.post(note_url, {"kind": "comment", "reason": "broken", "text": "just a remark"})
    assert ItemNote.objects.filter(kind="comment", reason="", text="just a remark").exists()

    # Bad input: the message names the field and nothing is stored.
    answer = client.post(note_url, {"kind": "flag", "reason": ""}, follow=True)
    assert "Your note was not sent: reason:" in answer.content.decode()
    assert ItemNote.objects.count() == 2


def test_the_note_form_answers_json_to_the_script_and_404_for_others_items() -> None:
    study = work_study(contexts=2, systems=1, k=2)
    annotator, client = web_member(study)
    client.get(reverse("work:next", args=[study.pk, "rate"]))
    assignment = Assignment.objects.get(annotator=annotator)
    note_url = reverse("work:note", args=[study.pk, "rate", assignment.pk])

    answer = client.post(note_url, {"kind": "comment", "text": "fine"}, HTTP_ACCEPT="application/json")
    assert answer.status_code == 200
    assert answer.json()["recorded"] is True
    answer = client.post(note_url, {"kind": "comment", "text": ""}, HTTP_ACCEPT="application/json")
    assert answer.status_code == 400
    assert answer.json()["field"] == "text"

    _, intruder = web_member(study)
    assert intruder.post(note_url, {"kind": "comment", "text": "x"}).status_code == 404
    stranger = Client()
    stranger.force_login(UserFactory.create())
    assert stranger.post(note_url, {"kind": "comment", "text": "x"}).status_code == 404
    assert ItemNote.objects.count() == 1


def test_the_notes_api() -> None:
    study = work_study(contexts=2, systems=1, k=2)
    owner, other = annotators(study, 2)
    for annotator in (owner, other):
        annotator.user = UserFactory.create()
        annotator.save()
    assignment = next_assignment(annotator=owner, kind=WorkKind.RATE).assignment
    url = f"/api/work/{study.pk}/assignments/{assignment.pk}/notes/"
    api = APIClient()
    api.force_authenticate(owner.user)

    answer = api.post(url, {"kind": "flag", "reason": "offensive", "text": "rude"}, format="json")
    assert answer.status_code == 201
    assert answer.json() == {"recorded": True, "kind": "flag"}
    answer = api.post(url, {"kind": "flag", "reason": "dull"}, format="json")
    assert answer.status_code == 400
    assert answer.json()["field"] == "reason"
    answer = api.post(url, {"kind": "remark", "text": "x"}, format="json")
    assert (answer.status_code, answer.json()["field"]) == (400, "kind")

    api.force_authenticate(other.user)
    assert api.post(url, {"kind": "comment", "text": "x"}, format="json").status_code == 404
    api.force_authenticate(UserFactory.create())
    assert api.post(url, {"kind": "comment", "text": "x"}, format="json").status_code == 404
    assert ItemNote.objects.count() == 1
