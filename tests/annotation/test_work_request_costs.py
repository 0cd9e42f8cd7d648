"""What one "next item" and one "submit" cost the database (issue 13's load targets): a bounded number of
queries whatever the study's size, and the study-wide count of free items taken at most every
FREE_ITEMS_CACHE_SECONDS when it is large, exactly when it is small (the end of a study)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import WorkItem
from annotation.selectors import work as work_selectors
from annotation.selectors.work import annotator_progress, study_free_items
from tests.annotation.work_builders import work_study
from tests.api.work_api_support import members

pytestmark = pytest.mark.django_db

NEXT_QUERIES = 14  # auth + annotator with its gate, lock, counts, pool, take, item, insert, payload, progress
SUBMIT_QUERIES = 12


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
