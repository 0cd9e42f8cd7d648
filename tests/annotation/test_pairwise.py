"""Pairwise comparison on a real database: pair items per context, hand-out by the assignment
engine to k raters each, the blind page and API (sides, never ids or system names), answers stored in
canonical a/b terms, changed through "back", exported as CSV and JSONL, counted on the progress page."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from typing import Any

import pytest
from django.http import StreamingHttpResponse
from django.test import Client
from django.utils import timezone

from annotation.exports.files import PAIRWISE_COLUMNS
from annotation.models import (
    Annotator,
    Assignment,
    AssignmentStatus,
    PairwiseJudgment,
    Response,
    Study,
    System,
    WorkItem,
    WorkKind,
)
from annotation.pairwise_order import canonical_choice, lower_id_on_left, shown_order, shown_position
from annotation.selectors.exports import export_chunks, study_work_progress
from annotation.selectors.progress import annotator_rows, task_progress
from annotation.selectors.work import annotator_tasks, item_payload
from annotation.services import pairwise_items
from annotation.services.annotators import annotator_join
from annotation.services.assignment import NoWork, assignment_skip, next_assignment
from annotation.services.pairwise import pairwise_submit
from annotation.services.pairwise_items import context_pairs
from annotation.services.studies import study_create
from annotation.services.study_settings import AnnotationSettings, SettingsInvalid, annotation_settings_update
from annotation.services.submissions import SubmissionInvalid
from annotation.services.work_items import work_items_sync
from tests.annotation.work_builders import first_context
from tests.api.work_api_support import members
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

SYSTEMS = ("SecretBotAlpha", "SecretBotBeta", "SecretBotGamma", "SecretBotDelta")


def pair_study(*, contexts: int = 2, systems: int = 3, k: int = 2, **settings: Any) -> Study:
    """``contexts`` contexts each answered once by ``systems`` systems whose names appear in no reply;
    the pairwise task on, no attention checks."""
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name=f"pairwise {owner.pk}", ratings_per_item=k)
    for field, value in {"check_interval": 0, "pairwise_enabled": True, **settings}.items():
        setattr(study, field, value)
    study.save()
    bots = [SystemFactory.create(study=study, name=SYSTEMS[index]) for index in range(systems)]
    for index in range(contexts):
        context = DialogContextFactory.create(
            study=study, turns=[{"speaker": "A", "text": f"what did you do on day {index} ?"}]
        )
        for number, bot in enumerate(bots):
            ResponseFactory.create(context=context, system=bot, text=f"reply {number} about day {index}")
    work_items_sync(study=study)
    return study


def pair_items(study: Study) -> list[WorkItem]:
    return list(WorkItem.objects.filter(study=study, kind=WorkKind.PAIR).order_by("id"))


def joined(study: Study, count: int) -> list[Annotator]:
    """``count`` volunteers who joined through the invite link and accepted the consent text."""
    annotators = [annotator_join(token=study.invite_token, user=UserFactory.create()) for _ in range(count)]
    Annotator.objects.filter(pk__in=[a.pk for a in annotators]).update(consented_at=timezone.now())
    for annotator in annotators:
        annotator.refresh_from_db()
    return annotators


def take(annotator: Annotator) -> Assignment:
    return next_assignment(annotator=annotator, kind=WorkKind.PAIR).assignment


# --- items --------------------------------------------------------------------------------------------


def test_every_pair_of_systems_replies_to_a_context_is_one_item_wanting_k_raters() -> None:
    study = pair_study(contexts=2, systems=3, k=3)
    items = pair_items(study)
    assert len(items) == 2 * 3  # S(S-1)/2 = 3 pairs per context
    for item in items:
        assert item.response is not None
        assert item.response_b is not None
        assert item.response_id < item.response_b_id  # type: ignore[operator]
        assert item.response.context_id == item.response_b.context_id == item.context_id
        assert item.response.system_id != item.response_b.system_id
        assert (item.wanted, item.taken, item.done) == (3, 0, 0)
    per_context = {
        context: [i for i in items if i.context_id == context] for context in {i.context_id for i in items}
    }
    for context_items in per_context.values():
        systems = {frozenset((i.response.system.name, i.response_b.system.name)) for i in context_items}  # type: ignore[union-attr]
        assert systems == {
            frozenset(pair)
            for pair in ((SYSTEMS[0], SYSTEMS[1]), (SYSTEMS[0], SYSTEMS[2]), (SYSTEMS[1], SYSTEMS[2]))
        }


def test_sync_is_idempotent_follows_k_and_leaves_out_other_samples_and_turned_off_studies() -> None:
    study = pair_study(contexts=1, systems=2, k=2)
    context = first_context(study)
    bot = Response.objects.filter(context=context).first()
    assert bot is not None
    ResponseFactory.create(context=context, system=bot.system, sample_index=1, text="a second sample")
    assert work_items_sync(study=study).get(WorkKind.PAIR) == 0  # sample 1 pairs with nothing
    assert len(pair_items(study)) == 1
    study.ratings_per_item = 5
    study.save()
    work_items_sync(study=study)
    assert [item.wanted for item in pair_items(study)] == [5]

    plain = pair_study(contexts=2, systems=3, pairwise_enabled=False)
    assert pair_items(plain) == []
    annotator = joined(plain, 1)[0]
    assert WorkKind.PAIR not in annotator_tasks(annotator=annotator)
    with pytest.raises(NoWork) as closed:
        next_assignment(annotator=annotator, kind=WorkKind.PAIR)
    assert closed.value.reason == "closed"


def test_contexts_with_many_systems_get_a_reproducible_capped_sample_of_pairs(monkeypatch) -> None:
    replies = [(100 + index, index) for index in range(6)]  # six systems: 15 pairs
    everything = context_pairs(replies, context_id=7, limit=100)
    assert len(everything) == 15
    sample = context_pairs(replies, context_id=7, limit=4)
    assert len(sample) == 4
    assert set(sample) <= set(everything)
    assert context_pairs(replies, context_id=7, limit=4) == sample  # seeded by the context id
    assert all(first < second for first, second in sample)

    monkeypatch.setattr(pairwise_items, "MAX_PAIRS_PER_CONTEXT", 2)
    study = pair_study(contexts=2, systems=4)
    items = pair_items(study)
    assert len(items) == 4
    assert work_items_sync(study=study).get(WorkKind.PAIR) == 0  # a full context gets no more


def test_turning_the_task_on_in_the_settings_makes_the_items_and_a_blank_question_is_refused() -> None:
    study = pair_study(contexts=2, systems=2, pairwise_enabled=False)
    current = AnnotationSettings.of(study)
    changed = annotation_settings_update(
        study=study, settings=dataclasses.replace(current, pairwise_enabled=True, pairwise_prompt="Better?")
    )
    assert set(changed) == {"pairwise_enabled", "pairwise_prompt"}
    assert len(pair_items(study)) == 2
    with pytest.raises(SettingsInvalid) as refused:
        annotation_settings_update(
            study=study, settings=dataclasses.replace(AnnotationSettings.of(study), pairwise_prompt="  ")
        )
    assert refused.value.field == "pairwise_prompt"
    study.refresh_from_db()
    assert study.pairwise_prompt == "Better?"
    only_pairs = dataclasses.replace(
        AnnotationSettings.of(study), rating_enabled=False, references_wanted=0, diversity_enabled=False
    )
    assert annotation_settings_update(study=study, settings=only_pairs) == ["rating_enabled"]


# --- hand-out and answers -----------------------------------------------------------------------------


def test_each_pair_goes_to_k_different_raters_and_no_further() -> None:
    study = pair_study(contexts=2, systems=3, k=2)
    raters = joined(study, 3)
    answered = 0
    for round_ in range(10):
        for annotator in raters:
            try:
                assignment = take(annotator)
            except NoWork:
                continue
            pairwise_submit(
                annotator=annotator, assignment_id=assignment.pk, choice=("left", "right", "tie")[round_ % 3]
            )
            answered += 1
    assert answered == 6 * 2
    for item in pair_items(study):
        assert (item.taken, item.done) == (2, 2)
        judgments = PairwiseJudgment.objects.filter(
            response_a=item.response_id, response_b=item.response_b_id
        )
        assert judgments.count() == 2
        assert len({judgment.annotator_id for judgment in judgments}) == 2
    for annotator in raters:
        with pytest.raises(NoWork):
            take(annotator)


def test_an_answer_by_side_is_stored_in_canonical_terms_with_the_side_shown_first() -> None:
    study = pair_study(contexts=3, systems=2, k=1)
    (annotator,) = joined(study, 1)
    seen = set()
    for choice in ("left", "right", "tie"):
        assignment = take(annotator)
        item = assignment.item
        left_is_a = lower_id_on_left(order_seed=annotator.order_seed, item_id=item.pk)
        seen.add(left_is_a)
        left, _ = shown_order(
            order_seed=annotator.order_seed,
            item_id=item.pk,
            response_a=item.response_id,  # type: ignore[arg-type]
            response_b=item.response_b_id,  # type: ignore[arg-type]
        )
        pairwise_submit(annotator=annotator, assignment_id=assignment.pk, choice=choice, seconds=2.5)
        judgment = PairwiseJudgment.objects.get(annotator=annotator, response_a=item.response_id)
        assert judgment.response_b_id == item.response_b_id
        assert judgment.choice == canonical_choice(choice, left_is_a=left_is_a)
        assert judgment.shown_first_id == left
        assert judgment.client_seconds == 2.5
        assert judgment.seconds_spent is not None
        assert judgment.seconds_spent >= 0
        assignment.refresh_from_db()
        assert assignment.status == AssignmentStatus.DONE
    assert canonical_choice("left", left_is_a=True) == "a"
    assert canonical_choice("left", left_is_a=False) == "b"
    assert canonical_choice("right", left_is_a=False) == "a"
    assert shown_position("b", left_is_a=False) == "left"


def test_bad_answers_name_the_field_and_change_nothing() -> None:
    study = pair_study(contexts=1, systems=2, k=2)
    first, second = joined(study, 2)
    mine = take(first)
    cases = [
        ({"annotator": first, "assignment_id": mine.pk, "choice": "up"}, "choice"),
        ({"annotator": first, "assignment_id": mine.pk, "choice": ""}, "choice"),
        ({"annotator": first, "assignment_id": mine.pk, "choice": "a"}, "choice"),  # sides, not ids
        ({"annotator": first, "assignment_id": mine.pk, "choice": "left", "seconds": -1.0}, "seconds"),
        ({"annotator": second, "assignment_id": mine.pk, "choice": "left"}, "assignment"),  # not theirs
        ({"annotator": first, "assignment_id": 999_999, "choice": "left"}, "assignment"),
    ]
    for arguments, field in cases:
        with pytest.raises(SubmissionInvalid) as rejected:
            pairwise_submit(**arguments)  # type: ignore[arg-type]
        assert rejected.value.field == field
    rating = next_assignment(annotator=first, kind=WorkKind.RATE).assignment
    with pytest.raises(SubmissionInvalid) as wrong_kind:
        pairwise_submit(annotator=first, assignment_id=rating.pk, choice="left")
    assert wrong_kind.value.field == "assignment"
    assert PairwiseJudgment.objects.count() == 0
    mine.refresh_from_db()
    assert mine.status == AssignmentStatus.ACTIVE


def test_a_judgment_bumps_the_data_version(committed) -> None:
    study = pair_study(contexts=1, systems=2)
    (annotator,) = joined(study, 1)
    assignment = take(annotator)
    before = Study.objects.get(pk=study.pk).data_version
    with committed():
        pairwise_submit(annotator=annotator, assignment_id=assignment.pk, choice="tie")
    assert Study.objects.get(pk=study.pk).data_version > before


# --- blind, per-annotator order --------------------------------------------------------------------------


def test_the_payload_is_blind_and_its_order_is_stable_per_annotator_and_item() -> None:
    study = pair_study(contexts=4, systems=2, k=2)
    first, second = joined(study, 2)
    first.order_seed, second.order_seed = 11, 12
    first.save()
    second.save()
    assignment = take(first)
    payload = item_payload(assignment=assignment)
    text = json.dumps(payload)
    assert "SecretBot" not in text
    assert "system" not in text
    for response_id in (assignment.item.response_id, assignment.item.response_b_id):
        assert str(response_id) not in [
            str(value) for reply in payload["replies"] for value in reply.values()
        ]
    assert [reply["label"] for reply in payload["replies"]] == ["Reply A", "Reply B"]
    assert [reply["position"] for reply in payload["replies"]] == ["left", "right"]
    assert payload["prompt"] == study.pairwise_prompt
    assert payload["answers"] is None
    assert item_payload(assignment=Assignment.objects.get(pk=assignment.pk)) == payload  # a reload
    # Sides are drawn per annotator and item: half the items each way, different between annotators.
    sides = [lower_id_on_left(order_seed=seed, item_id=item) for seed in (11, 12) for item in range(1, 401)]
    assert 0.4 < sum(sides) / len(sides) < 0.6
    assert sides[:400] != sides[400:]


def test_the_page_shows_both_replies_without_system_names_and_back_changes_the_answer() -> None:
    study = pair_study(contexts=2, systems=2, k=1)
    (annotator,) = joined(study, 1)
    user = annotator.user
    assert user is not None
    client = Client()
    client.force_login(user)
    page = client.get(f"/work/{study.pk}/pair/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Reply A" in html
    assert "Reply B" in html
    assert study.pairwise_prompt in html
    assert "SecretBot" not in html
    assignment = Assignment.objects.get(annotator=annotator)
    item = assignment.item
    left_text = page.context["replies"][0]["text"]
    assert html.count('name="choice"') == 3

    missing = client.post(f"/work/{study.pk}/pair/{assignment.pk}/", {"choice": ""})
    assert missing.status_code == 400
    assert "choice" in missing.content.decode()
    assert PairwiseJudgment.objects.count() == 0

    answered = client.post(f"/work/{study.pk}/pair/{assignment.pk}/", {"choice": "left", "seconds": "3.2"})
    assert answered.status_code == 302
    assert answered["Location"] == f"/work/{study.pk}/pair/"
    judgment = PairwiseJudgment.objects.get(annotator=annotator)
    winner = judgment.response_b if judgment.choice == "b" else judgment.response_a
    assert winner.text == left_text

    client.get(f"/work/{study.pk}/pair/")  # the next pair is handed out
    back = client.get(f"/work/{study.pk}/pair/back/", follow=True)
    assert back.status_code == 200
    assert back.context["revisiting"] is True
    assert [reply["checked"] for reply in back.context["replies"]] == [True, False]
    again = client.post(f"/work/{study.pk}/pair/{assignment.pk}/", {"choice": "right"})
    assert again.status_code == 302
    judgment.refresh_from_db()
    assert judgment.choice == ("b" if judgment.shown_first_id == item.response_id else "a")
    assert PairwiseJudgment.objects.filter(annotator=annotator).count() == 1
    item.refresh_from_db()
    assert item.done == 1  # an edit is not a second answer

    # A pair item is not reachable through another task's address, nor another study's.
    assert (
        client.post(f"/work/{study.pk}/rate/{assignment.pk}/", {"q-appropriateness": "1"}).status_code == 404
    )
    other = pair_study(contexts=1, systems=2)
    assert client.get(f"/work/{other.pk}/pair/").status_code == 404


def test_skip_returns_the_pair_to_the_pool_for_others() -> None:
    study = pair_study(contexts=1, systems=2, k=1)
    first, second = joined(study, 2)
    held = take(first)
    with pytest.raises(NoWork):
        take(second)
    assignment_skip(annotator=first, assignment_id=held.pk)
    assert take(second).item_id == held.item_id


# --- API --------------------------------------------------------------------------------------------------


def test_the_api_hands_out_pairs_and_takes_answers_by_side() -> None:
    study = pair_study(contexts=1, systems=2, k=1)
    (member,) = members(study, 1)
    item = member.next(study, kind="pair")
    assert item.status_code == 200, item.content
    body = item.json()
    assert body["kind"] == "pair"
    assert [reply["position"] for reply in body["replies"]] == ["left", "right"]
    assert all("id" not in reply for reply in body["replies"])
    assert "SecretBot" not in json.dumps(body)
    bad = member.post(study, body["assignment"], "pairwise", {"choice": "both"})
    assert (bad.status_code, bad.json()["field"]) == (400, "choice")
    missing = member.post(study, body["assignment"], "pairwise", {})
    assert (missing.status_code, missing.json()["field"]) == (400, "choice")
    done = member.post(study, body["assignment"], "pairwise", {"choice": "tie", "seconds": 1.5})
    assert done.status_code == 200, done.content
    progress = done.json()["progress"]
    assert (progress["done"], progress["total"], progress["percent"]) == (1, 1, 100)
    assert PairwiseJudgment.objects.get().choice == "tie"
    previous = member.client.get(f"/api/work/{study.pk}/previous/", {"kind": "pair"}).json()
    assert previous["answers"] == {"choice": "tie"}
    finished = member.next(study, kind="pair").json()
    assert (finished["done"], finished["reason"]) == (True, "done")
    stranger = members(pair_study(contexts=1, systems=2), 1)[0]
    assert stranger.post(study, body["assignment"], "pairwise", {"choice": "left"}).status_code == 404


# --- exports and progress -------------------------------------------------------------------------------


def _answered_study() -> tuple[Study, list[Annotator]]:
    study = pair_study(contexts=2, systems=3, k=2)
    raters = joined(study, 2)
    for annotator in raters:
        for index in range(3):
            assignment = take(annotator)
            pairwise_submit(
                annotator=annotator,
                assignment_id=assignment.pk,
                choice=("left", "right", "tie")[index],
                seconds=1.25,
            )
    return study, raters


def test_pairwise_exports_round_trip_in_csv_and_jsonl() -> None:
    study, _ = _answered_study()
    csv_text = "".join(export_chunks(study=study, what="pairwise", fmt="csv"))
    jsonl_text = "".join(export_chunks(study=study, what="pairwise", fmt="jsonl"))
    from_csv = list(csv.DictReader(io.StringIO(csv_text)))
    from_jsonl = [json.loads(line) for line in jsonl_text.splitlines()]
    assert tuple(csv.reader(io.StringIO(csv_text)).__next__()) == PAIRWISE_COLUMNS
    assert len(from_csv) == len(from_jsonl) == PairwiseJudgment.objects.count() == 6
    for row_csv, row_json in zip(from_csv, from_jsonl, strict=True):
        assert list(row_json) == list(PAIRWISE_COLUMNS)
        assert {key: "" if value is None else str(value) for key, value in row_json.items()} == row_csv
    for row, judgment in zip(from_jsonl, PairwiseJudgment.objects.order_by("pk"), strict=True):
        assert (row["response_a_id"], row["response_b_id"], row["choice"]) == (
            judgment.response_a_id,
            judgment.response_b_id,
            judgment.choice,
        )
        assert row["annotator"] == judgment.annotator.pseudonym
        assert row["winner"] == {"a": row["system_a"], "b": row["system_b"]}.get(row["choice"], "tie")
        assert row["shown_first"] == ("a" if judgment.shown_first_id == judgment.response_a_id else "b")
        assert row["client_seconds"] == 1.25
        assert row["time"].endswith("Z")


def test_the_pairwise_csv_neutralises_formulas_and_keeps_numbers() -> None:
    study, _ = _answered_study()
    System.objects.filter(study=study, name=SYSTEMS[0]).update(name='=HYPERLINK("http://x")')
    rows = list(csv.DictReader(io.StringIO("".join(export_chunks(study=study, what="pairwise", fmt="csv")))))
    names = {row["system_a"] for row in rows} | {row["system_b"] for row in rows}
    assert '\'=HYPERLINK("http://x")' in names
    assert not any(name.startswith("=") for name in names)
    assert all(row["response_a_id"].isdigit() and row["client_seconds"] == "1.25" for row in rows)


def test_pairwise_downloads_are_the_owners_only() -> None:
    study, _ = _answered_study()
    owner = Client()
    owner.force_login(study.owner)
    download = owner.get(f"/studies/{study.pk}/export/pairwise.csv")
    assert download.status_code == 200
    assert isinstance(download, StreamingHttpResponse)
    assert b"".join(download.streaming_content).decode().startswith(",".join(PAIRWISE_COLUMNS))
    page = owner.get(f"/api/studies/{study.pk}/pairwise/")
    assert page.status_code == 200
    assert page.json()["columns"] == list(PAIRWISE_COLUMNS)
    assert len(page.json()["results"]) == 6
    jsonl = owner.get(f"/api/studies/{study.pk}/pairwise/?format=jsonl")
    assert isinstance(jsonl, StreamingHttpResponse)
    assert len(b"".join(jsonl.streaming_content).decode().splitlines()) == 6
    assert "pairwise.csv" in owner.get(f"/studies/{study.pk}/").content.decode()
    stranger = Client()
    stranger.force_login(ResearcherFactory.create())
    assert stranger.get(f"/studies/{study.pk}/export/pairwise.csv").status_code == 404
    assert stranger.get(f"/api/studies/{study.pk}/pairwise/").status_code == 404


def test_the_progress_page_counts_pair_items_and_each_annotators_pairs() -> None:
    study, raters = _answered_study()
    tasks = {task.kind: task for task in task_progress(study=study)}
    assert (tasks["pair"].items, tasks["pair"].done, tasks["pair"].wanted) == (6, 6, 12)
    rows = {row.annotator_id: row for row in annotator_rows(study=study)}
    assert [rows[annotator.pk].compared for annotator in raters] == [3, 3]
    assert {
        entry["annotator"]: entry["compared"] for entry in study_work_progress(study=study)["annotators"]
    } == {annotator.pseudonym: 3 for annotator in raters}
    owner = Client()
    owner.force_login(study.owner)
    page = owner.get(f"/studies/{study.pk}/annotation/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="progress-pair"' in html
    assert "Pairwise comparisons" in html
    assert 'id="pairwise-settings"' in html
