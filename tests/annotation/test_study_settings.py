"""The annotation settings service: validation names the field, saving syncs the work items."""

from __future__ import annotations

import dataclasses

import pytest

from annotation.models import Annotator, WorkItem, WorkKind
from annotation.services.assignment import next_assignment
from annotation.services.studies import study_create
from annotation.services.study_settings import AnnotationSettings, SettingsInvalid, annotation_settings_update
from annotation.services.work_items import work_items_sync
from tests.factories import DialogContextFactory, ResearcherFactory, ResponseFactory, SystemFactory

pytestmark = pytest.mark.django_db


def _study():
    study = study_create(owner=ResearcherFactory.create(), name="settings", ratings_per_item=3)
    bot = SystemFactory.create(study=study)
    for index in range(2):
        context = DialogContextFactory.create(study=study)
        for sample in range(2):
            ResponseFactory.create(context=context, system=bot, sample_index=sample, text=f"r{index}{sample}")
    work_items_sync(study=study)
    return study


def test_saving_returns_what_changed_and_syncs_items() -> None:
    study = _study()
    current = AnnotationSettings.of(study)
    assert annotation_settings_update(study=study, settings=current) == []
    changed = annotation_settings_update(
        study=study, settings=dataclasses.replace(current, diversity_enabled=True, ratings_per_item=4)
    )
    assert sorted(changed) == ["diversity_enabled", "ratings_per_item"]
    assert WorkItem.objects.filter(study=study, kind=WorkKind.DIVERSITY).count() == 2
    assert set(WorkItem.objects.filter(study=study, kind=WorkKind.RATE).values_list("wanted", flat=True)) == {
        4
    }


def test_lowering_k_keeps_the_slots_already_taken() -> None:
    study = _study()
    study.check_interval = 0
    study.save()
    for index in range(3):
        next_assignment(annotator=Annotator.objects.create(study=study, pseudonym=f"a{index}"))
    annotation_settings_update(
        study=study, settings=dataclasses.replace(AnnotationSettings.of(study), ratings_per_item=1)
    )
    for item in WorkItem.objects.filter(study=study, kind=WorkKind.RATE):
        assert item.wanted == max(1, item.taken)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"ratings_per_item": 0}, "ratings_per_item"),
        ({"kappa_threshold": 1.5}, "kappa_threshold"),
        ({"hold_seconds": 5}, "hold_seconds"),
        ({"collection_mode": "many"}, "collection_mode"),
        ({"check_action": "shout"}, "check_action"),
        ({"rating_enabled": False}, "rating_enabled"),
    ],
)
def test_bad_values_name_their_field_and_change_nothing(change, field) -> None:
    study = _study()
    before = AnnotationSettings.of(study)
    with pytest.raises(SettingsInvalid) as error:
        annotation_settings_update(
            study=study, settings=dataclasses.replace(AnnotationSettings.of(study), **change)
        )
    assert error.value.field == field
    study.refresh_from_db()
    assert AnnotationSettings.of(study) == before
    assert study.ratings_per_item == 3
    assert study.rating_enabled
