"""The assignment engine under concurrency, at the service level: threads calling next_assignment,
rating_submit and assignment_skip directly against a real database (SQLite here; PostgreSQL, where the
pool is read with SKIP LOCKED, through scripts/test_postgres.sh), with a sweeper expiring holds at the
same time. Afterwards the database must satisfy the engine's invariants, whatever the interleaving:

- ``taken`` of every item equals its active plus done assignments, ``done`` its done assignments;
- no item has more answers than it wants; nobody was given an item twice; no rating is stored twice;
- every acknowledged rating is stored (none lost), and a reply's ratings match its item's ``done``.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import (
    Annotator,
    Assignment,
    AssignmentStatus,
    Rating,
    WorkItem,
    WorkKind,
)
from annotation.services.assignment import NoWork, SlotLost, assignment_skip, expire_stale, next_assignment
from annotation.services.submissions import rating_submit
from tests.annotation.work_builders import add_distractor_check, annotators, work_study

pytestmark = pytest.mark.django_db(transaction=True)


def _check_invariants(study_id: int) -> None:
    items = WorkItem.objects.filter(study_id=study_id).annotate(
        live=Count("assignments", filter=Q(assignments__status__in=[AssignmentStatus.ACTIVE, "done"])),
        answered=Count("assignments", filter=Q(assignments__status=AssignmentStatus.DONE)),
    )
    assert not items.exclude(taken=F("live")).exists(), "taken != active + done"
    assert not items.exclude(done=F("answered")).exists(), "done != done assignments"
    assert not items.filter(done__gt=F("wanted")).exists(), "more answers than wanted"
    pairs = Counter(Assignment.objects.filter(item__study_id=study_id).values_list("item_id", "annotator_id"))
    assert max(pairs.values(), default=1) == 1, "an item was given to the same annotator twice"
    ratings = Rating.objects.filter(response__context__study_id=study_id)
    duplicates = ratings.values("annotator_id", "response_id", "question_id").annotate(n=Count("id"))
    assert not duplicates.filter(n__gt=1).exists(), "a rating stored twice"
    per_reply = Counter(ratings.values_list("response_id", flat=True))
    for response_id, done in WorkItem.objects.filter(study_id=study_id, kind=WorkKind.RATE).values_list(
        "response_id", "done"
    ):
        assert per_reply.get(response_id, 0) == done, "a reply's ratings differ from its item's answers"


def _run_together(workers: list[threading.Thread]) -> None:
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(timeout=240)
    assert not any(thread.is_alive() for thread in workers), "a worker hung"


def _annotator_loop(
    annotator: Annotator,
    barrier: threading.Barrier,
    rounds: int,
    acknowledged: list[int],
    errors: list[BaseException],
    skip_share: float,
) -> None:
    rng = random.Random(annotator.pk)
    try:
        barrier.wait(timeout=30)
        for _ in range(rounds):
            try:
                handout = next_assignment(annotator=annotator, kind=WorkKind.RATE)
            except NoWork as no_work:
                if no_work.reason == "done":
                    return
                continue
            if rng.random() < skip_share:
                assignment_skip(annotator=annotator, assignment_id=handout.assignment.pk)
                continue
            try:
                rating_submit(
                    annotator=annotator,
                    assignment_id=handout.assignment.pk,
                    values={"appropriateness": rng.randint(0, 2)},
                    seconds=rng.uniform(2, 9),
                )
            except SlotLost:
                continue  # the sweeper took the item back and others filled it: not acknowledged
            if handout.assignment.item.kind == WorkKind.RATE:
                acknowledged.append(handout.assignment.item.response_id or 0)
    except BaseException as error:
        errors.append(error)
    finally:
        connection.close()


@pytest.mark.parametrize("round_number", range(3))
def test_many_rounds_of_next_skip_submit_keep_every_invariant(round_number):
    study = work_study(contexts=8, systems=2, k=3, check_interval=5, hold_seconds=3600)
    add_distractor_check(study, expected=(0, 2))
    people = annotators(study, 8)
    barrier = threading.Barrier(len(people) + 1)
    acknowledged: list[int] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def sweeper() -> None:
        """Makes some holds stale and returns them to the pool while the annotators work."""
        rng = random.Random(round_number)
        try:
            barrier.wait(timeout=30)
            while not stop.is_set():
                active = list(
                    Assignment.objects.filter(item__study=study, status=AssignmentStatus.ACTIVE).values_list(
                        "pk", flat=True
                    )
                )
                if active:
                    Assignment.objects.filter(pk=rng.choice(active)).update(
                        handed_at=timezone.now() - timedelta(hours=2)
                    )
                    expire_stale(study=study)
                stop.wait(0.02)
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    workers = [
        threading.Thread(target=_annotator_loop, args=(person, barrier, 60, acknowledged, errors, 0.15))
        for person in people
    ]
    sweeping = threading.Thread(target=sweeper)
    sweeping.start()
    _run_together(workers)
    stop.set()
    sweeping.join(timeout=30)
    assert not errors, errors

    _check_invariants(study.pk)
    ratings = Rating.objects.filter(response__context__study=study)
    assert Counter(ratings.values_list("response_id", flat=True)) == Counter(acknowledged), "lost or extra"
    assert ratings.count() > 0


def test_many_annotators_racing_for_few_slots_fill_each_item_exactly():
    """Twelve annotators, four items wanting two answers each, no skips: exactly eight ratings."""
    study = work_study(contexts=2, systems=2, k=2)
    people = annotators(study, 12)
    barrier = threading.Barrier(len(people))
    acknowledged: list[int] = []
    errors: list[BaseException] = []
    workers = [
        threading.Thread(target=_annotator_loop, args=(person, barrier, 30, acknowledged, errors, 0.0))
        for person in people
    ]
    _run_together(workers)
    assert not errors, errors
    _check_invariants(study.pk)
    assert sorted(WorkItem.objects.filter(study=study).values_list("done", flat=True)) == [2, 2, 2, 2]
    assert len(acknowledged) == Rating.objects.filter(response__context__study=study).count() == 8
