"""A skipped item comes back (when the tool was tried for real): at the end of the annotator's
queue, counted as skipped meanwhile (page and progress), not at all once others filled it, and with its
assignment active again."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Assignment, AssignmentStatus, WorkKind
from annotation.selectors.work import annotator_progress
from annotation.services.assignment import NoWork, assignment_skip, next_assignment
from annotation.services.submissions import rating_submit
from tests.annotation.work_builders import annotators, work_study
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_skipped_item_comes_back_at_the_end_and_the_count_says_so() -> None:
    study = work_study(contexts=3, systems=1, k=1)
    (annotator,) = annotators(study, 1)
    first = next_assignment(annotator=annotator).assignment
    assignment_skip(annotator=annotator, assignment_id=first.pk)
    progress = annotator_progress(annotator=annotator, kind=WorkKind.RATE)
    assert (progress.done, progress.total, progress.skipped) == (0, 3, 1)

    seen = []
    for _ in range(3):
        handout = next_assignment(annotator=annotator).assignment
        seen.append(handout.item_id)
        rating_submit(annotator=annotator, assignment_id=handout.pk, values={"appropriateness": 1})
    assert seen[-1] == first.item_id  # the skip came back last
    assert len(set(seen)) == 3
    progress = annotator_progress(annotator=annotator, kind=WorkKind.RATE)
    assert (progress.done, progress.total, progress.skipped) == (3, 3, 0)
    with pytest.raises(NoWork) as finished:
        next_assignment(annotator=annotator)
    assert finished.value.reason == "done"


def test_a_skipped_item_that_others_filled_leaves_the_count_complete() -> None:
    study = work_study(contexts=2, systems=1, k=1)
    me, other = annotators(study, 2)
    mine = next_assignment(annotator=me).assignment
    assignment_skip(annotator=me, assignment_id=mine.pk)
    rest = next_assignment(annotator=me).assignment  # the other item
    rating_submit(annotator=me, assignment_id=rest.pk, values={"appropriateness": 2})
    theirs = next_assignment(annotator=other).assignment
    assert theirs.item_id == mine.item_id  # the skipped item went back to the pool, and only it is left
    rating_submit(annotator=other, assignment_id=theirs.pk, values={"appropriateness": 0})
    progress = annotator_progress(annotator=me, kind=WorkKind.RATE)
    assert (progress.done, progress.total, progress.skipped) == (1, 1, 0)  # not "1 of 2"
    with pytest.raises(NoWork) as finished:
        next_assignment(annotator=me)
    assert finished.value.reason == "done"


def test_the_page_shows_the_skipped_count() -> None:
    study = work_study(contexts=3, systems=1, k=1)
    (annotator,) = annotators(study, 1)
    annotator.user = UserFactory.create()
    annotator.save()
    client = Client()
    client.force_login(annotator.user)
    client.get(f"/work/{study.pk}/rate/")
    held = Assignment.objects.get(annotator=annotator)
    client.post(f"/work/{study.pk}/rate/{held.pk}/skip/")
    page = client.get(f"/work/{study.pk}/rate/").content.decode()
    assert "1 skipped: it comes back at the end" in page


def test_a_stale_assignment_keeps_its_status_after_the_skip_came_back() -> None:
    study = work_study(contexts=1, systems=1, k=1)
    (annotator,) = annotators(study, 1)
    held = next_assignment(annotator=annotator).assignment
    assignment_skip(annotator=annotator, assignment_id=held.pk)
    back = next_assignment(annotator=annotator).assignment
    assert back.pk == held.pk
    assert back.status == AssignmentStatus.ACTIVE
    assert back.served_at is not None
