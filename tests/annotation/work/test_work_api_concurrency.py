"""Many annotators hitting the work API at the same moment, against a real database (SQLite here;
PostgreSQL through scripts/test_postgres.sh): no item goes to more annotators than it wants, nobody gets
an item twice, every acknowledged answer is stored exactly once.

Each thread is one annotator with their own user, Annotator row, API client and database connection
(closed when the thread ends); a barrier releases them together.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.db.models import Count, F, Q

from annotation.models import Assignment, AssignmentStatus, Rating, WorkItem
from tests.annotation.work_builders import work_study
from tests.api.work_api_support import Member, members

pytestmark = pytest.mark.django_db(transaction=True)


def all_at_once(people: list[Member], action: Callable[[int, Member], Any]) -> list[Any]:
    """Run ``action`` for every member in its own thread, released together; results in member order.
    An exception in a thread is returned in its place (and fails the test where it is looked at)."""
    barrier = threading.Barrier(len(people))
    results: list[Any] = [None] * len(people)

    def run(index: int, member: Member) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = action(index, member)
        except Exception as error:  # reported by the caller's assertions
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, m)) for i, m in enumerate(people)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a request hung"
    for result in results:
        if isinstance(result, Exception):
            raise result
    return results


def assert_engine_invariants(study_id: int) -> None:
    """What must hold after any interleaving: counters match the assignments, nothing over k."""
    items = WorkItem.objects.filter(study_id=study_id).annotate(
        live=Count("assignments", filter=Q(assignments__status__in=["active", "done"])),
        answered=Count("assignments", filter=Q(assignments__status="done")),
    )
    assert not items.exclude(taken=F("live")).exists(), "taken != active + done"
    assert not items.exclude(done=F("answered")).exists(), "done != done assignments"
    assert not items.filter(done__gt=F("wanted")).exists(), "an item has more answers than it wants"
    assert not items.filter(taken__gt=F("wanted")).exists()
    pairs = Counter(Assignment.objects.filter(item__study_id=study_id).values_list("item_id", "annotator_id"))
    assert max(pairs.values(), default=1) == 1, "an annotator was given an item twice"
    duplicates = (
        Rating.objects.filter(response__context__study_id=study_id)
        .values("annotator_id", "response_id", "question_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not duplicates.exists(), "a rating was stored twice"


def test_eight_annotators_asking_at_once_share_six_slots_then_submit_at_once():
    study = work_study(contexts=3, systems=1, k=2)
    people = members(study, 8)

    answers = all_at_once(people, lambda _, member: member.next(study))
    assert all(answer.status_code == 200 for answer in answers)
    bodies = [answer.json() for answer in answers]
    handed = [body for body in bodies if not body["done"]]
    assert len(handed) == 6  # 3 items x k=2, no more, no fewer
    assert {body["reason"] for body in bodies if body["done"]} == {"busy"}
    per_item = Counter(
        Assignment.objects.filter(item__study=study, status=AssignmentStatus.ACTIVE).values_list(
            "item_id", flat=True
        )
    )
    assert sorted(per_item.values()) == [2, 2, 2]
    assert list(WorkItem.objects.filter(study=study).values_list("taken", flat=True)) == [2, 2, 2]
    assert_engine_invariants(study.pk)

    holders = [member for member, body in zip(people, bodies, strict=True) if not body["done"]]
    by_user = {
        member.user.pk: body["assignment"]
        for member, body in zip(people, bodies, strict=True)
        if not body["done"]
    }
    posted = all_at_once(
        holders, lambda index, member: member.rate(study, by_user[member.user.pk], value=index % 3)
    )
    assert [answer.status_code for answer in posted] == [200] * 6
    assert Rating.objects.filter(response__context__study=study).count() == 6
    assert list(WorkItem.objects.filter(study=study).values_list("done", flat=True)) == [2, 2, 2]
    assert_engine_invariants(study.pk)
    again = all_at_once(people, lambda _, member: member.next(study).json()["reason"])
    assert set(again) == {"done"}


def test_annotators_working_through_a_study_together_rate_every_item_exactly_k_times():
    study = work_study(contexts=6, systems=2, k=3)
    people = members(study, 6)

    def work(index: int, member: Member) -> int:
        acknowledged = 0
        skipped: set[int] = set()
        for _ in range(500):
            body = member.next(study).json()
            if body["done"]:
                if body["reason"] == "done":
                    break
                time.sleep(0.01)  # busy: others hold the rest; they will answer or skip
                continue
            # A skipped item comes back at the end of the queue: the second time, it is answered.
            skip = (index + body["sequence"]) % 5 == 0 and not body["resumed"]
            if skip and body["assignment"] not in skipped:
                skipped.add(body["assignment"])
                assert member.post(study, body["assignment"], "skip").status_code == 200
                continue
            answer = member.rate(study, body["assignment"], value=index % 3)
            assert answer.status_code == 200, answer.content
            acknowledged += 1
        else:
            raise AssertionError(f"annotator {index} never finished")
        return acknowledged

    acknowledged = all_at_once(people, work)
    ratings = Rating.objects.filter(response__context__study=study)
    assert sum(acknowledged) == ratings.count()  # nothing lost, nothing extra
    assert_engine_invariants(study.pk)
    # Every reply got k answers, unless so many people skipped it that fewer than k were left to ask.
    for item in WorkItem.objects.filter(study=study):
        skippers = item.assignments.filter(status=AssignmentStatus.SKIPPED).count()
        assert item.done == min(3, len(people) - skippers), (item.pk, item.done, skippers)
        assert ratings.filter(response=item.response).count() == item.done
    assert Assignment.objects.filter(item__study=study, status=AssignmentStatus.ACTIVE).count() == 0


def test_one_annotator_double_clicking_gets_one_item():
    study = work_study(contexts=4, systems=1, k=2)
    (member,) = members(study, 1)
    same_person = [member] * 5  # five requests of the same annotator at once (another tab, a double click)
    bodies = [answer.json() for answer in all_at_once(same_person, lambda _, m: m.next(study))]
    assert all(not body["done"] for body in bodies), bodies
    assert len({body["assignment"] for body in bodies}) == 1
    assert Assignment.objects.filter(annotator=member.annotator).count() == 1
    assert_engine_invariants(study.pk)
