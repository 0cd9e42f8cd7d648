"""Anonymous imported raters (one per score position of a GRADE file, ``identity_known`` False) are not
people, so they get no per-rater straight-lining figures: the same position holds different
people's scores from one reply to the next, and a "rater" who always gave 5 says nothing about anyone.
A named imported rater with the same scores is still checked."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from annotation.importers import ImportFile
from annotation.models import Annotator, Question
from annotation.selectors.quality import STRAIGHT_MIN_RATINGS, study_quality
from annotation.services.imports import study_import
from annotation.services.studies import study_create

pytestmark = pytest.mark.django_db

REPLIES = STRAIGHT_MIN_RATINGS + 2  # enough ratings per rater for straight-lining to be judged


def _grade_line(index: int) -> str:
    return json.dumps(
        {
            "ID": index,
            "Dataset": "dailydialog_EVAL",
            "DialogModel": "generator",
            "Context": f"How was day {index} ?|||It was long .",
            "Response": f"reply {index} .",
            "HumanScores": json.dumps([5, 5, 5]),  # every position always gives 5
            "Reference": "thank you .",
        }
    )


def _named_line(index: int, question: str) -> str:
    return json.dumps(
        {
            "context": [f"Where to on day {index} ?"],
            "response": f"named reply {index} .",
            "system": "ranker",
            "ratings": {question: [5]},
            "annotators": ["ann"],
        }
    )


def _study_with_anonymous_and_named_raters(researcher):
    study = study_create(owner=researcher, name="grade raters", scale="1-5")
    grade = "".join(_grade_line(index) + "\n" for index in range(REPLIES)).encode()
    study_import(study=study, format="grade", files=[ImportFile(name="human_judgement.jsonl", data=grade)])
    question = Question.objects.get(study=study).name
    named = "".join(_named_line(index, question) + "\n" for index in range(REPLIES)).encode()
    study_import(study=study, format="jsonl", files=[ImportFile(name="named.jsonl", data=named)])
    return study


def test_anonymous_raters_get_no_straight_lining_row_and_named_ones_still_do(researcher) -> None:
    study = _study_with_anonymous_and_named_raters(researcher)
    anonymous = set(
        Annotator.objects.filter(study=study, identity_known=False).values_list("pseudonym", flat=True)
    )
    assert len(anonymous) == 3

    rows = {row.pseudonym: row for row in study_quality(study=study)}
    for pseudonym in anonymous:
        assert rows[pseudonym].uniformity == {}
        assert rows[pseudonym].most_uniform is None
        assert not rows[pseudonym].straight_lined
    assert rows["ann"].straight_lined  # a person who always gave 5 is still flagged


def test_the_annotation_page_shows_no_straight_lining_for_anonymous_raters_and_says_why(researcher) -> None:
    study = _study_with_anonymous_and_named_raters(researcher)
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/studies/{study.pk}/annotation/").content.decode()
    cells = dict(
        re.findall(
            r'<tr class="annotator" data-annotator="([^"]+)">.*?<td class="straight">(.*?)</td>', page, re.S
        )
    )
    assert len(cells) == 4
    for pseudonym, cell in cells.items():
        if pseudonym == "ann":
            assert "yes" in cell
        else:
            assert "yes" not in cell
            assert "%" not in cell
            assert "anonymous" in cell
    assert "Anonymous imported raters" in page  # the note under the table
