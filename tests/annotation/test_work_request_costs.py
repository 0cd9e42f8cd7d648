"""What one "next item" and one "submit" cost the database (the annotation load targets, docs/benchmarks.md,
Annotation server): a bounded number of queries whatever the study's size, and the study-wide count of free
items taken at most every FREE_ITEMS_CACHE_SECONDS when it is large, exactly when it is small (the end of a
study)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, WorkItem, WorkKind
from annotation.selectors import work as work_selectors
from annotation.selectors.work import annotator_progress, progress_from_counts, study_free_items
from annotation.services.assignment import NoWork, assignment_skip, next_assignment
from annotation.services.submissions import rating_submit
from tests.annotation.work_builders import add_distractor_check, annotators, work_study
from tests.api.work_api_support import members

pytestmark = pytest.mark.django_db

# next: auth, annotator with its gate, pool, lock, own counts, take (RETURNING), insert, reply, questions,
# the study's free items (the hand-out's counts give the progress); on SQLite Django logs BEGIN, not COMMIT.
NEXT_QUERIES = 11
# submit: auth, annotator, assignment (read once), questions, complete, done counter, ratings, data
# version, own counts, free items.
SUBMIT_QUERIES = 10


def _cycle(study, member) -> tuple[int, int]:
    with CaptureQueriesContext(connection) as handed:
        shown = member.next(study)
    assert shown.status_code == 200, shown.content
    with CaptureQueriesContext(connection) as answered:
        stored = member.rate(study, shown.json()["assignment"])
    assert stored.status_code == 200, stored.content
    return len(handed.captured_queries), len(answered.captured_queries)


@pytest.mark.parametrize("contexts", [4, 40])
def test_next_and_submit_take_a_bounded_number_of_queries_whatever_the_study_size(contexts):
    study = work_study(contexts=contexts, k=2)
    member = members(study, 1)[0]
    for _ in range(3):
        handed, answered = _cycle(study, member)
        assert handed <= NEXT_QUERIES, handed
        assert answered <= SUBMIT_QUERIES, answered


def test_a_large_studys_free_count_is_reused_briefly_and_a_small_one_is_always_exact(monkeypatch):
    cache.clear()
    study = work_study(contexts=5, systems=1, k=1)
    member = members(study, 1)[0]
    monkeypatch.setattr(work_selectors, "FREE_ITEMS_EXACT_BELOW", 4)
    assert study_free_items(study_id=study.pk, kind="rate") == 5  # counted, and kept (5 >= 4)
    first = WorkItem.objects.filter(study=study).order_by("id")[0]
    WorkItem.objects.filter(pk=first.pk).update(taken=1)  # someone else took one meanwhile
    assert study_free_items(study_id=study.pk, kind="rate") == 5  # the kept count, at most 2 s old
    progress = annotator_progress(annotator=member.annotator, kind="rate")
    assert (progress.done, progress.total) == (0, 5)

    cache.clear()  # as when the 2 s are over
    assert study_free_items(study_id=study.pk, kind="rate") == 4  # counted again; kept (4 >= 4)
    WorkItem.objects.filter(pk__in=WorkItem.objects.filter(study=study, taken=0).values("pk")[:1]).update(
        taken=1
    )
    cache.clear()
    assert study_free_items(study_id=study.pk, kind="rate") == 3  # small: counted ...
    WorkItem.objects.filter(study=study).update(taken=1)
    assert study_free_items(study_id=study.pk, kind="rate") == 0  # ... and never reused
    assert annotator_progress(annotator=member.annotator, kind="rate").total == 0


def _fresh(annotator) -> tuple[int, int, int]:
    progress = annotator_progress(annotator=annotator, kind="rate")
    return progress.done, progress.total, progress.skipped


def _handed(annotator) -> tuple[Assignment, tuple[int, int, int]]:
    """The item handed out, and the progress the hand-out reports from the counts it read under the
    annotator's lock (instead of reading them again)."""
    handout = next_assignment(annotator=annotator)
    assert handout.counts is not None
    progress = progress_from_counts(annotator=annotator, kind="rate", counts=handout.counts)
    return handout.assignment, (progress.done, progress.total, progress.skipped)


def test_a_handouts_progress_is_the_progress_read_afresh_in_every_path():
    """The "next item" answer computes the progress from the counts the hand-out read (one query fewer);
    it must say what a fresh read says after a new item, the last slot of an item (no longer free), an
    attention check, a reload of the held item and a skipped item taken back at the end of the queue."""
    cache.clear()
    study = work_study(contexts=3, systems=1, k=2, check_interval=3)
    add_distractor_check(study)
    first, second = annotators(study, 2)
    paths: set[str] = set()
    skipped_by_first: set[int] = set()
    for turn in range(14):
        annotator = second if turn % 3 == 0 else first
        try:
            held, handed = _handed(annotator)
        except NoWork:
            continue
        assert handed == _fresh(annotator), (turn, held.item.kind)
        reloaded, again = _handed(annotator)  # a reload: the same item, the same counts
        assert reloaded.pk == held.pk
        assert again == handed
        paths.add("retaken skip" if held.pk in skipped_by_first else str(held.item.kind))
        if annotator is first and held.item.kind == WorkKind.RATE and not skipped_by_first:
            assignment_skip(annotator=first, assignment_id=held.pk)  # comes back at the end of the queue
            skipped_by_first.add(held.pk)
            assert _handed(first)[1] == _fresh(first)  # the skip counted, and the next item handed out
            rating_submit(
                annotator=first,
                assignment_id=next_assignment(annotator=first).assignment.pk,
                values={"appropriateness": 0},
            )
            continue
        rating_submit(annotator=annotator, assignment_id=held.pk, values={"appropriateness": 0})
    assert paths == {"rate", "check", "retaken skip"}
    done, total, skipped = _fresh(first)
    assert (done, skipped) == (total, 0)
