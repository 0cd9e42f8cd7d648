"""The assignment engine's rules, one by one, on a real database ("Assignment engine")."""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, WorkItem, WorkKind
from annotation.services.assignment import (
    NoWork,
    SlotLost,
    assignment_skip,
    assignment_visit,
    expire_stale,
    next_assignment,
    previous_assignment,
)
from annotation.services.submissions import rating_submit
from annotation.services.work_items import work_items_sync
from tests.annotation.work_builders import (
    add_distractor_check,
    annotators,
    measured,
    shown_ago,
    work_study,
)

pytestmark = pytest.mark.django_db


def _rate(annotator, kind=WorkKind.RATE, value=1):
    handout = next_assignment(annotator=annotator, kind=kind)
    rating_submit(
        annotator=annotator,
        assignment_id=handout.assignment.pk,
        values={"appropriateness": value},
        seconds=3.0,
    )
    return handout.assignment


def test_every_response_becomes_one_rating_item_wanting_k():
    study = work_study(contexts=3, systems=2, k=4)
    items = WorkItem.objects.filter(study=study, kind=WorkKind.RATE)
    assert items.count() == 6
    assert set(items.values_list("wanted", flat=True)) == {4}
    assert work_items_sync(study=study).get(WorkKind.RATE) == 0  # idempotent


def test_fewest_ratings_first_and_never_twice():
    study = work_study(contexts=2, systems=2, k=3)
    first, second, third = annotators(study, 3)
    for annotator in (first, second, third):
        for _ in range(4):
            _rate(annotator)
    taken = list(WorkItem.objects.filter(study=study).values_list("taken", flat=True))
    assert taken == [3, 3, 3, 3]
    pairs = Counter(Assignment.objects.values_list("item_id", "annotator_id"))
    assert max(pairs.values()) == 1
    with pytest.raises(NoWork) as no_work:
        next_assignment(annotator=first)
    assert no_work.value.reason == "done"


def test_an_annotator_gets_the_least_rated_item():
    study = work_study(contexts=3, systems=1, k=3)
    early, late = annotators(study, 2)
    rated = [_rate(early).item_id for _ in range(2)]
    handout = next_assignment(annotator=late)
    unrated = set(WorkItem.objects.filter(study=study).values_list("pk", flat=True)) - set(rated)
    assert handout.assignment.item_id in unrated


def test_shuffled_order_is_per_annotator_and_reproducible():
    study = work_study(contexts=12, systems=1, k=12)
    people = annotators(study, 2)
    orders = []
    for annotator in people:
        order = []
        for _ in range(12):
            order.append(_rate(annotator).item_id)
        orders.append(order)
    assert orders[0] != orders[1]  # different seeds, different orders (12! orders: a tie is ~impossible)
    # Reproducible: each order is the annotator's documented hash of seed and id, recomputed here from the
    # stored seed alone (annotation.item_order).
    for annotator, order in zip(people, orders, strict=True):
        assert order == sorted(order, key=lambda item_id: _order_key(annotator.order_seed, item_id))


def _order_key(seed: int, item_id: int) -> int:
    digest = hashlib.sha256(f"item-order:{seed}:{item_id}".encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big")


def test_reload_returns_the_same_item():
    study = work_study()
    annotator = annotators(study, 1)[0]
    first = next_assignment(annotator=annotator)
    again = next_assignment(annotator=annotator)
    assert again.resumed
    assert again.assignment.pk == first.assignment.pk


def test_cap_per_annotator():
    study = work_study(contexts=4, systems=1, k=2, max_items_per_annotator=2)
    annotator = annotators(study, 1)[0]
    _rate(annotator)
    _rate(annotator)
    with pytest.raises(NoWork) as no_work:
        next_assignment(annotator=annotator)
    assert no_work.value.reason == "cap"


def test_unanswered_item_goes_back_to_the_pool_after_the_timeout():
    study = work_study(contexts=1, systems=1, k=1, hold_seconds=60)
    slow, fast = annotators(study, 2)
    held = next_assignment(annotator=slow).assignment
    with pytest.raises(NoWork) as no_work:
        next_assignment(annotator=fast)
    assert no_work.value.reason == "busy"
    Assignment.objects.filter(pk=held.pk).update(handed_at=timezone.now() - timedelta(seconds=61))
    handout = next_assignment(annotator=fast)  # sweeps the stale hold, then hands the item out
    assert handout.assignment.item_id == held.item_id
    held.refresh_from_db()
    assert held.status == AssignmentStatus.EXPIRED
    # The slow annotator's late answer finds the slot gone and says so; nothing is stored.
    with pytest.raises(SlotLost):
        rating_submit(annotator=slow, assignment_id=held.pk, values={"appropriateness": 2})
    assert not slow.ratings.exists()


def test_late_answer_is_kept_when_the_item_still_has_room():
    study = work_study(contexts=1, systems=1, k=2, hold_seconds=60)
    slow = annotators(study, 1)[0]
    held = next_assignment(annotator=slow).assignment
    Assignment.objects.filter(pk=held.pk).update(handed_at=timezone.now() - timedelta(seconds=61))
    assert expire_stale(study=study) == 1
    assert WorkItem.objects.get(pk=held.item_id).taken == 0
    rating_submit(annotator=slow, assignment_id=held.pk, values={"appropriateness": 2})
    item = WorkItem.objects.get(pk=held.item_id)
    assert (item.taken, item.done) == (1, 1)
    assert slow.ratings.get().value == 2


def test_skip_frees_the_slot_and_the_item_never_comes_back():
    study = work_study(contexts=2, systems=1, k=1)
    annotator, other = annotators(study, 2)
    skipped = next_assignment(annotator=annotator).assignment
    assignment_skip(annotator=annotator, assignment_id=skipped.pk)
    assert WorkItem.objects.get(pk=skipped.item_id).taken == 0
    assert next_assignment(annotator=annotator).assignment.item_id != skipped.item_id
    assert next_assignment(annotator=other).assignment.item_id == skipped.item_id


def test_back_then_change_replaces_the_value():
    study = work_study(contexts=3, systems=1, k=1)
    annotator = annotators(study, 1)[0]
    first = _rate(annotator, value=0)
    current = next_assignment(annotator=annotator).assignment
    back = previous_assignment(annotator=annotator, kind=WorkKind.RATE, before=current.pk)
    assert back is not None
    assert back.pk == first.pk
    rating_submit(annotator=annotator, assignment_id=back.pk, values={"appropriateness": 2})
    assert annotator.ratings.get(response_id=first.item.response_id).value == 2
    assert WorkItem.objects.get(pk=first.item_id).done == 1  # an edit is not a second rating
    assert next_assignment(annotator=annotator).assignment.pk == current.pk


def test_blocked_annotator_gets_nothing():
    study = work_study()
    annotator = annotators(study, 1)[0]
    annotator.blocked = True
    annotator.save()
    with pytest.raises(NoWork) as no_work:
        next_assignment(annotator=annotator)
    assert no_work.value.reason == "blocked"


def test_attention_check_comes_at_the_interval_and_looks_like_any_item():
    study = work_study(contexts=5, systems=1, k=1, check_interval=3)
    add_distractor_check(study)
    annotator = annotators(study, 1)[0]
    kinds = []
    for _ in range(6):
        handout = next_assignment(annotator=annotator)
        kinds.append(handout.assignment.item.kind)
        rating_submit(annotator=annotator, assignment_id=handout.assignment.pk, values={"appropriateness": 0})
    assert kinds == ["rate", "rate", "check", "rate", "rate", "rate"]
    assert annotator.check_answers.get().passed
    assert annotator.ratings.count() == 5  # a check answer is never a rating


@pytest.mark.parametrize(("action", "blocked"), [("warn", False), ("block", True)])
def test_failed_checks_warn_or_block(action, blocked):
    study = work_study(
        contexts=4, systems=1, k=1, check_interval=1, check_action=action, check_failures_allowed=0
    )
    add_distractor_check(study, expected=(0, 0))
    annotator = annotators(study, 1)[0]
    handout = next_assignment(annotator=annotator)
    assert handout.assignment.item.kind == WorkKind.CHECK
    result = rating_submit(
        annotator=annotator, assignment_id=handout.assignment.pk, values={"appropriateness": 2}
    )
    assert result.warnings
    assert result.blocked is blocked
    annotator.refresh_from_db()
    assert annotator.blocked is blocked


@pytest.mark.parametrize(
    ("mode", "writers", "quotas"), [("one", 1, [4]), ("two", 2, [2, 2]), ("each", 4, [1, 1, 1, 1])]
)
def test_collection_modes_split_n_references(mode, writers, quotas):
    study = work_study(contexts=1, systems=1, references_wanted=4, collection_mode=mode)
    work_items_sync(study=study)
    item = WorkItem.objects.get(study=study, kind=WorkKind.WRITE)
    assert item.wanted == writers
    given = [
        next_assignment(annotator=a, kind=WorkKind.WRITE).assignment.quota for a in annotators(study, writers)
    ]
    assert given == quotas
    with pytest.raises(NoWork):
        next_assignment(annotator=annotators(study, 1)[0], kind=WorkKind.WRITE)


def test_a_task_turned_off_hands_out_nothing():
    study = work_study(references_wanted=4)
    annotator = annotators(study, 1)[0]
    study.references_wanted = 0
    study.save()
    annotator.refresh_from_db()
    with pytest.raises(NoWork) as no_work:
        next_assignment(annotator=annotator, kind=WorkKind.WRITE)
    assert no_work.value.reason == "closed"


def test_changing_an_answer_adds_its_time_to_the_first_visit():
    study = work_study(contexts=2, systems=1, k=1)
    annotator = annotators(study, 1)[0]
    handout = next_assignment(annotator=annotator)
    shown_ago(handout.assignment.pk, 3.0)
    first = handout.assignment
    rating_submit(annotator=annotator, assignment_id=first.pk, values={"appropriateness": 1}, seconds=2.0)
    first_visit = measured(annotator.ratings.get().seconds_spent)
    assert 3.0 <= first_visit < 10
    first.refresh_from_db()
    assignment_visit(assignment=first)  # opened again to change the answer: a second visit
    shown_ago(first.pk, 2.0)
    rating_submit(annotator=annotator, assignment_id=first.pk, values={"appropriateness": 0}, seconds=1.5)
    rating = annotator.ratings.get()
    assert (
        first_visit + 2.0 <= measured(rating.seconds_spent) < first_visit + 10
    )  # the server's visits add up
    assert rating.client_seconds == pytest.approx(3.5)  # so do the client's claims, kept beside them


def test_joining_skips_pseudonyms_already_taken():
    from annotation.models import Annotator
    from annotation.services.annotators import annotator_join
    from tests.factories import UserFactory

    study = work_study()
    Annotator.objects.create(study=study, pseudonym="annotator-001")
    Annotator.objects.create(study=study, pseudonym="annotator-003")
    joined = [annotator_join(token=study.invite_token, user=UserFactory.create()).pseudonym for _ in range(2)]
    assert joined == ["annotator-004", "annotator-005"]
    user = Annotator.objects.get(pseudonym="annotator-004").user
    assert user is not None
    assert annotator_join(token=study.invite_token, user=user).pseudonym == "annotator-004"  # idempotent


def test_a_writer_who_skips_halfway_leaves_exactly_the_missing_references():
    from annotation.models import Reference
    from annotation.services.submissions import reference_add

    study = work_study(contexts=1, systems=1, references_wanted=5, collection_mode="two")
    first, second, third = annotators(study, 3)
    held = next_assignment(annotator=first, kind=WorkKind.WRITE).assignment
    assert held.quota == 3  # 5 split over two writers: 3 + 2
    reference_add(annotator=first, assignment_id=held.pk, text="one reply here", seconds=5.0)
    assert next_assignment(annotator=second, kind=WorkKind.WRITE).assignment.quota == 2
    assignment_skip(annotator=first, assignment_id=held.pk)
    # 1 written, 2 promised to the second writer: the third is asked for the 2 still missing.
    assert next_assignment(annotator=third, kind=WorkKind.WRITE).assignment.quota == 2
    assert Reference.objects.filter(origin="collected").count() == 1
