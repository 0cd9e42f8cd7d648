"""The project's documents as pages of the app (config/doc_pages.py): every docs/*.md, linked from the
pages' help, with links between them leading to their pages; nothing else of the file system."""

from __future__ import annotations

import pytest
from django.test import Client

from config.doc_pages import documents
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db


def _client() -> Client:
    client = Client()
    client.force_login(ResearcherFactory.create())
    return client


def test_every_document_has_a_page_and_links_between_documents_lead_to_pages() -> None:
    client = _client()
    assert {"import-formats", "annotation", "report", "metrics"} <= set(documents())
    for name in documents():
        assert client.get(f"/docs/{name}/").status_code == 200, name
    page = client.get("/docs/annotation/").content.decode()
    assert 'href="/docs/import-formats/#contexts-download-the-round-trip"' in page
    index = client.get("/docs/").content.decode()
    assert 'href="/docs/import-formats/"' in index


def test_anything_else_is_404_and_visitors_log_in_first() -> None:
    client = _client()
    for path in ("/docs/nope/", "/docs/..%2Fsettings/", "/docs/README/"):
        assert client.get(path).status_code == 404, path
    assert Client().get("/docs/import-formats/").status_code == 302
