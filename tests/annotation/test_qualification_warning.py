"""The researcher is warned when the qualification round is so short that one wrong answer fails a
volunteer (with 3 training items and the default 80%, 2 of 3 right is below the threshold), and
told how many items would allow one mistake."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from django.test import Client

from annotation.selectors.qualification_warning import one_mistake_warning
from annotation.services.qualification import training_answer_submit
from tests.annotation.joining_builders import training_items, training_study, volunteer

pytestmark = pytest.mark.django_db


def _fewest_items_for_one_mistake(threshold: str) -> int:
    """The smallest n with (n - 1) / n >= threshold, by counting in exact fractions."""
    n = 1
    while Fraction(n - 1, n) < Fraction(threshold):
        n += 1
    return n


def _fails_on_one_mistake(study) -> bool:
    """What the round really does to a volunteer who gets only the first item wrong."""
    annotator = volunteer(study)
    items = training_items(study)
    feedback = None
    for index, item in enumerate(items):
        assert (item.gold_min, item.gold_max) == (2, 2)  # training_study's right answer
        value = 0 if index == 0 else 2
        feedback = training_answer_submit(annotator=annotator, training_item_id=item.pk, value=value)
    assert feedback is not None
    assert feedback.finished
    return feedback.qualification == "failed"


def _annotation_page(study) -> str:
    client = Client()
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/annotation/")
    assert page.status_code == 200
    return re.sub(r"\s+", " ", page.content.decode())


def test_three_items_at_eighty_percent_warn_and_say_how_many_allow_one_mistake() -> None:
    study = training_study(items=3, threshold=0.8)
    assert _fails_on_one_mistake(study)  # the warning tells the truth about the round

    warning = one_mistake_warning(study=study)
    assert warning is not None
    assert warning.items == 3
    assert warning.items_needed == _fewest_items_for_one_mistake("0.8")

    page = _annotation_page(study)
    assert 'id="qualification-warning"' in page
    assert warning.message in page
    assert f"{warning.items_needed} training items" in warning.message
    assert "one wrong answer fails a volunteer" in warning.message


def test_five_items_at_eighty_percent_allow_one_mistake_and_give_no_warning() -> None:
    study = training_study(items=5, threshold=0.8)
    assert not _fails_on_one_mistake(study)

    assert one_mistake_warning(study=study) is None
    page = _annotation_page(study)
    assert 'id="qualification-warning"' not in page
    assert "one wrong answer fails a volunteer" not in page


def test_no_training_items_give_no_warning_and_a_threshold_of_one_says_no_number_of_items_helps() -> None:
    assert one_mistake_warning(study=training_study(items=0, threshold=0.8)) is None

    strict = one_mistake_warning(study=training_study(items=4, threshold=1.0))
    assert strict is not None
    assert strict.items_needed is None
    assert "however many training items" in strict.message
