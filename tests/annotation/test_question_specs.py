"""Questions written one per line (the new-study form): name, scale, optional labels; clear errors."""

from __future__ import annotations

import pytest

from annotation.scales import QuestionSpec, question_specs_from_text


def test_lines_become_questions() -> None:
    text = "appropriateness 0-2 bad / borderline / good\n\n  fluency 1-5  \nnegative -2-2\n"
    assert question_specs_from_text(text) == [
        QuestionSpec("appropriateness", 0, 2, ("bad", "borderline", "good")),
        QuestionSpec("fluency", 1, 5, ()),
        QuestionSpec("negative", -2, 2, ()),
    ]


def test_empty_text_means_no_extra_questions() -> None:
    assert question_specs_from_text(" \n") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Fluency 1-5", "line 1: 'Fluency 1-5' is not `name min-max"),
        ("fluency\n", "line 1"),
        ("ok 0-1\nfluency 3-3", "line 2: the scale 3-3 must go from low to high"),
        ("fluency 1-3 a / b", "line 1: 2 labels for the 3 points of 1-3"),
        ("fluency 1-3\nfluency 0-2", "line 2: the question 'fluency' is named twice"),
    ],
)
def test_bad_lines_are_named(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("`", "`")):
        question_specs_from_text(text)
