"""What the study page says about an import (when the tool was tried for real): a rejected
file's problems are printed once, the page has no duplicate ids, and an accepted import's counts read as
words."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.services.studies import study_create
from tests.annotation.work_builders import work_study
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db


def _ids(html: str) -> Counter[str]:
    return Counter(re.findall(r'\sid="([^"]+)"', html))


def test_the_study_page_has_no_duplicate_ids_and_prints_import_errors_once() -> None:
    owner = ResearcherFactory.create()
    study = work_study(contexts=2, systems=2, k=1)
    study.owner = owner
    study.save()
    client = Client()
    client.force_login(owner)
    page = client.get(f"/studies/{study.pk}/").content.decode()
    duplicates = [name for name, count in _ids(page).items() if count > 1]
    assert duplicates == []

    bad = SimpleUploadedFile("bad.jsonl", b'{"context": ["hi"], "response": 5, "system": "s"}\n')
    rejected = client.post(f"/studies/{study.pk}/import/", {"format": "jsonl", "files": [bad]})
    assert rejected.status_code == 400
    html = rejected.content.decode()
    assert html.count("The import was rejected and nothing was changed") == 1
    assert html.count("bad.jsonl, line 1") == 1  # one problem, listed once
    assert [name for name, count in _ids(html).items() if count > 1] == []


def test_the_import_message_reads_as_words() -> None:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="words", scale="0-2")
    client = Client()
    client.force_login(owner)
    rows = b'{"context": ["hi ?"], "response": "hello", "system": "s"}\n'
    response = client.post(f"/studies/{study.pk}/import/",
                           {"format": "jsonl", "files": [SimpleUploadedFile("a.jsonl", rows)]}, follow=True)  # fmt: skip
    text = response.content.decode()
    assert "1 new context, 1 new system, 1 new response" in text
    assert "_created" not in text
