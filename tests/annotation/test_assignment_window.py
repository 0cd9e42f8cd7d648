"""The hand-out's window (found by the annotation load benchmark, docs/benchmarks.md, Annotation server): in a
study with more free items than POOL_WINDOW, an annotator's shuffle ranges over the POOL_WINDOW free items
they were never given with the fewest answers, ties in the items' random ``pool_rank``, read from an index
instead of sorting every free item of the study. The rule "fewest answers first" stays exact."""

from __future__ import annotations

import pytest

from annotation.item_order import shuffle_key
from annotation.models import WorkItem
from annotation.models.work import POOL_RANK_RANGE
from annotation.services import assignment as engine
from annotation.services.assignment import next_assignment
from annotation.services.submissions import rating_submit
from tests.annotation.work_builders import annotators, work_study

pytestmark = pytest.mark.django_db


def _shuffled(annotator, item_ids):
    return sorted(item_ids, key=lambda item_id: shuffle_key(order_seed=annotator.order_seed, item_id=item_id))


def _rate(annotator):
    handout = next_assignment(annotator=annotator)
    rating_submit(annotator=annotator, assignment_id=handout.assignment.pk, values={"appropriateness": 1})
    return handout.assignment.item_id


def test_new_items_draw_random_ranks():
    study = work_study(contexts=40, systems=1, k=1)
    ranks = list(WorkItem.objects.filter(study=study).values_list("pool_rank", flat=True))
    assert len(set(ranks)) == len(ranks) == 40  # 40 draws below 2**31 - 1: a tie is ~impossible
    assert all(0 <= rank < POOL_RANK_RANGE for rank in ranks)


def _fewest_open(annotator) -> int:
    """The fewest answers (``taken``) among the free items the annotator was never given."""
    open_items = WorkItem.objects.filter(study_id=annotator.study_id).exclude(
        assignments__annotator=annotator
    )
    return min(item.taken for item in open_items if item.taken < item.wanted)


def test_the_annotator_shuffles_the_window_of_fewest_answers(monkeypatch):
    monkeypatch.setattr(engine, "POOL_WINDOW", 4)
    study = work_study(contexts=12, systems=1, k=2)
    first, second = annotators(study, 2)
    # Ranks against the first annotator's shuffle: the items they would take first rank last, so without
    # the window they would get an item outside it.
    order = _shuffled(first, list(WorkItem.objects.filter(study=study).values_list("pk", flat=True)))
    for rank, pk in enumerate(reversed(order)):
        WorkItem.objects.filter(pk=pk).update(pool_rank=rank)
    by_rank = list(reversed(order))
    assert _rate(first) == _shuffled(first, by_rank[:4])[0]  # the best of the window, not order[0]
    # The second annotator answers two items: those now have more answers than the others, so they leave
    # the first annotator's window, which moves on by rank.
    by_second = {_rate(second) for _ in range(2)}
    mine = set(WorkItem.objects.filter(assignments__annotator=first).values_list("pk", flat=True))
    open_now = [pk for pk in by_rank if pk not in mine and pk not in by_second]
    assert _rate(first) == _shuffled(first, open_now[:4])[0]
    # Fewest answers first stays exact to the end.
    while True:
        try:
            fewest = _fewest_open(first)
        except ValueError:  # nothing open any more
            break
        handout = next_assignment(annotator=first)
        assert WorkItem.objects.get(pk=handout.assignment.item_id).taken - 1 == fewest
        rating_submit(annotator=first, assignment_id=handout.assignment.pk, values={"appropriateness": 1})
    assert WorkItem.objects.filter(assignments__annotator=first).count() == 12


def test_a_window_of_the_annotators_own_items_never_hides_free_ones(monkeypatch):
    """The annotator's own items are left out before the window is cut, so items they hold or answered at
    the lowest counts cannot fill it and hide the items still open to them."""
    monkeypatch.setattr(engine, "POOL_WINDOW", 2)
    study = work_study(contexts=6, systems=1, k=3)
    annotator = annotators(study, 1)[0]
    seen = [_rate(annotator) for _ in range(6)]
    assert sorted(seen) == sorted(WorkItem.objects.filter(study=study).values_list("pk", flat=True))
