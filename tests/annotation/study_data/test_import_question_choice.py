"""The import form's question: a study with one question showed a "Question:" label and its help
text with no control beside them (the field was a hidden input, whose label and help were still printed).
With no choice to make neither shows; with two questions the choice does, and an upload still imports."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import ImportedMeanRating, Question, Study
from annotation.scales import QuestionSpec
from annotation.services.studies import study_create
from annotation.study_data.forms import StudyImportForm
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db

QUESTION_HELP = str(StudyImportForm.base_fields["question"].help_text)


def import_form(client: Client, study: Study) -> str:
    page = client.get(f"/studies/{study.pk}/").content.decode()
    found = re.search(r'<form[^>]*id="import-form".*?</form>', page, re.S)
    assert found is not None
    return found.group(0)


def owner_client(study: Study) -> Client:
    client = Client()
    client.force_login(study.owner)
    return client


def test_the_question_shows_only_when_there_is_a_choice_to_make() -> None:
    study = study_create(owner=ResearcherFactory.create(), name="one question")
    client = owner_client(study)
    form = import_form(client, study)
    assert QUESTION_HELP not in form
    assert "Question" not in form
    assert 'name="question"' not in form

    # The one question still receives a mean that names no question.
    row = b'{"context": ["hi ?"], "response": "hello", "system": "s", "mean_rating": 1.5}\n'
    upload = SimpleUploadedFile("a.jsonl", row)
    response = client.post(f"/studies/{study.pk}/import/", {"format": "jsonl", "files": [upload]})
    assert response.status_code == 302, response.content.decode()[-2000:]
    (question,) = Question.objects.filter(study=study)
    assert ImportedMeanRating.objects.filter(question=question).count() == 1

    # With two questions there is a choice, and the form offers it.
    questions = [QuestionSpec(name=name, scale_min=0, scale_max=2) for name in ("fluency", "relevance")]
    two = study_create(owner=study.owner, name="two questions", questions=questions)
    form = import_form(client, two)
    assert QUESTION_HELP in form
    assert re.search(r'<select[^>]*name="question"', form)
    assert '<option value="relevance">relevance</option>' in form
