"""Ratings imported from files count toward k: a reply imported with k raters is complete and
handed to nobody, the annotation page counts them in its progress and each imported rater's "Rated", and
a study that wants a fresh collection (``count_imported_ratings`` off) asks for k ratings in the app."""

from __future__ import annotations

from dataclasses import replace

import pytest

from annotation.models import WorkItem, WorkKind
from annotation.selectors.exports import study_work_progress
from annotation.selectors.progress import annotator_rows, ratings_histogram, task_progress
from annotation.services.assignment import NoWork, next_assignment
from annotation.services.study_settings import AnnotationSettings, annotation_settings_update
from tests.annotation.joining_builders import volunteer
from tests.annotation.work_builders import imported_rating_study

pytestmark = pytest.mark.django_db


def test_replies_imported_with_k_ratings_are_complete_and_handed_to_nobody(researcher) -> None:
    study = imported_rating_study(researcher)
    [ratings] = [task for task in task_progress(study=study) if task.kind == WorkKind.RATE]
    assert (ratings.done, ratings.wanted, ratings.complete, ratings.imported) == (12, 12, 4, 12)
    assert [bar.items for bar in ratings_histogram(study=study)] == [0, 0, 0, 4]
    rated = {row.quality.pseudonym: row.rated for row in annotator_rows(study=study)}
    assert rated == {"rater-0": 4, "rater-1": 4, "rater-2": 4}
    with pytest.raises(NoWork):
        next_assignment(annotator=volunteer(study), kind=WorkKind.RATE)
    progress = study_work_progress(study=study)  # GET /api/studies/<id>/progress/
    assert [(task["done"], task["wanted"], task["imported"]) for task in progress["tasks"]] == [(12, 12, 12)]
    assert {(item["done"], item["wanted"], item["imported"]) for item in progress["items"]} == {(3, 3, 3)}


def test_a_reply_with_fewer_imported_raters_wants_only_the_rest(researcher) -> None:
    study = imported_rating_study(researcher, replies=2, raters=1, k=3)
    assert sorted(WorkItem.objects.filter(kind=WorkKind.RATE).values_list("imported", "wanted")) == [
        (1, 2),
        (1, 2),
    ]
    [ratings] = task_progress(study=study)
    assert (ratings.done, ratings.wanted) == (2, 6)


def test_a_fresh_collection_asks_for_k_ratings_in_the_app(researcher) -> None:
    study = imported_rating_study(researcher)
    fresh = replace(AnnotationSettings.of(study), count_imported_ratings=False)
    assert annotation_settings_update(study=study, settings=fresh) == ["count_imported_ratings"]
    [ratings] = task_progress(study=study)
    assert (ratings.done, ratings.wanted, ratings.imported) == (0, 12, 0)
    handout = next_assignment(annotator=volunteer(study), kind=WorkKind.RATE)
    assert handout.assignment.item.kind == WorkKind.RATE
