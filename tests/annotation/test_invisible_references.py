"""A reference made of invisible characters (zero-width spaces, joiners, soft hyphens...) is no reference
(when the tool was tried for real): refused, and no help to make a repeat look new."""

from __future__ import annotations

import pytest

from annotation import reference_rules
from annotation.models import Reference, WorkKind
from annotation.services.assignment import next_assignment
from annotation.services.submissions import SubmissionInvalid, reference_add
from tests.annotation.work_builders import annotators, work_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "text",
    ["\u200b\u200b\u200b", "\u200b \u200c\u200d\ufeff", "a\u200b", "\u2060\u00ad\u200e", " \u3000 "],
)
def test_references_of_invisible_characters_are_refused(text: str) -> None:
    assert reference_rules.length_problem(text) is not None
    study = work_study(contexts=1, systems=1, rating_enabled=False, references_wanted=2)
    (annotator,) = annotators(study, 1)
    handout = next_assignment(annotator=annotator, kind=WorkKind.WRITE).assignment
    with pytest.raises(SubmissionInvalid) as refused:
        reference_add(annotator=annotator, assignment_id=handout.pk, text=text, keystrokes=3)
    assert refused.value.field == "text"
    assert not Reference.objects.filter(author=annotator).exists()


def test_invisible_characters_do_not_make_a_repeat_new() -> None:
    assert reference_rules.repeat_problem("see\u200b you", ["see you"]) is not None
