"""The project's documents (docs/*.md) as pages of the app, so that the pages' help can link to them
("docs/import-formats.md" was plain text on the study page). Rendered by config/markdown_html.py,
every character escaped; links between the documents lead to their pages. Logged-in users only, like the
rest of the app; a name that is not a document of the folder is 404.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe

from config.markdown_html import markdown_html

DOCS_FOLDER = "docs"


def documents() -> dict[str, Path]:
    """Name ("import-formats") -> file, for every Markdown document of the folder."""
    folder = Path(settings.BASE_DIR) / DOCS_FOLDER
    return {path.stem: path for path in sorted(folder.glob("*.md"))}


def document_link(target: str) -> str | None:
    """The page of a link between documents ("metrics.md#tokenizer", "docs/report.md"), or None for a
    target that is not one of them (a source file, an image)."""
    path, _, anchor = target.partition("#")
    name = Path(path).name.removesuffix(".md")
    if not path.endswith(".md") or name not in documents():
        return None
    return reverse("doc-page", args=[name]) + (f"#{anchor}" if anchor else "")


@login_required
def doc_index(request: HttpRequest) -> HttpResponse:
    titles = {name: _title(path) for name, path in documents().items()}
    return render(request, "docs/index.html", {"documents": titles})


@login_required
def doc_page(request: HttpRequest, name: str) -> HttpResponse:
    path = documents().get(name)
    if path is None:
        raise Http404("No such document.")
    text = path.read_text(encoding="utf-8")
    # markdown_html escapes every character of the text and adds only its own markup.
    body = mark_safe(markdown_html(text, link=document_link))
    return render(request, "docs/page.html", {"name": name, "title": _title(path), "body": body})


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem
