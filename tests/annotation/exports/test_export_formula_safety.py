"""CSV injection in the annotation exports: ratings, collected references and diversity judgments, through
every route that writes them (the export function, the study page's download, the REST API and
``manage.py export_annotations``). Text from users that starts with ``=``, ``+``, ``-``, ``@``, tab or
carriage return comes out with a leading ``'``; numbers, negative ones included, come out as numbers."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.core.management import call_command
from django.http import StreamingHttpResponse
from django.test import Client

from annotation.models import Annotator, DialogContext, Question, Rating, Reference, Response, Study, System
from annotation.selectors.exports import export_chunks
from tests.annotation.export_builders import AWKWARD_REFERENCE, AWKWARD_SYSTEM, annotated_study
from tests.api.work_api_support import client_for

pytestmark = pytest.mark.django_db

PAYLOAD = "=cmd|' /C calc'!A0"
STUDY_NAME = "+study"


@dataclass
class InjectedStudy:
    study: Study
    injected: set[str]  # every piece of user text in it that a spreadsheet would run

    def cell(self, raw: str) -> str:
        """What the CSV must hold for ``raw``: a leading quote exactly for the injected texts."""
        return "'" + raw if raw in self.injected else raw


def injected_study() -> InjectedStudy:
    """The export study with formula-like text in every kind of user text the exports write, and a
    negative rating (a -2..2 scale) to show that numbers stay numbers."""
    study = annotated_study(name=STUDY_NAME).study
    injected = {STUDY_NAME, PAYLOAD}
    System.objects.filter(study=study, name=AWKWARD_SYSTEM).update(name=PAYLOAD)
    for old, new in (("rater-0", "@writer"), ("rater-1", "-judge"), ("rater-2", "\trater")):
        Annotator.objects.filter(study=study, pseudonym=old).update(pseudonym=new)
        injected.add(new)
    Question.objects.filter(study=study, name="fluency").update(name="-fluency")
    Question.objects.filter(study=study, name="appropriateness").update(scale_min=-2)
    injected.add("-fluency")
    for old, new in (("dlg,1", "\rdlg,1"), ("dlg,2", "-2")):
        DialogContext.objects.filter(study=study, external_id=old).update(external_id=new)
        injected.add(new)
    for reply in Response.objects.filter(context__study=study).exclude(external_id=""):
        reply.external_id = "=" + reply.external_id
        reply.save(update_fields=["external_id"])
        injected.add(reply.external_id)
    Reference.objects.filter(context__study=study, text=AWKWARD_REFERENCE).update(text=PAYLOAD)
    # a carriage return inside a cell must not start a new line (with a live formula after it)
    Reference.objects.filter(context__study=study, text="good idea").update(text="-5\r=1+1")
    injected.add("-5\r=1+1")
    first = Rating.objects.filter(response__context__study=study, question__name="appropriateness").first()
    assert first is not None
    Rating.objects.filter(pk=first.pk).update(value=-1)
    return InjectedStudy(study=study, injected=injected)


def _by_function(study: Study, what: str) -> str:
    return "".join(export_chunks(study=study, what=what, fmt="csv"))


def _by_page(study: Study, what: str) -> str:
    client = Client()
    client.force_login(study.owner)
    response = client.get(f"/studies/{study.pk}/export/{what}.csv")
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode("utf-8")


def _by_api(study: Study, what: str) -> str:
    response = client_for(study.owner).get(f"/api/studies/{study.pk}/{what}/", {"format": "csv"})
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode("utf-8")


def _by_command(study: Study, what: str) -> str:
    out = io.StringIO()
    call_command("export_annotations", str(study.pk), "--what", what, "--format", "csv", stdout=out)
    return out.getvalue()


ROUTES: dict[str, Callable[[Study, str], str]] = {
    "function": _by_function,
    "study page": _by_page,
    "api": _by_api,
    "command": _by_command,
}


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _seconds(value: float | None) -> str:
    return "" if value is None else repr(value)


@pytest.mark.parametrize("route", ROUTES)
def test_ratings_csv_neutralises_user_text_and_keeps_numbers(route):
    built = injected_study()
    rows = _rows(ROUTES[route](built.study, "ratings"))
    ratings = list(
        Rating.objects.filter(response__context__study=built.study)
        .select_related("response__context", "response__system", "annotator", "question")
        .order_by("pk")
    )
    assert len(rows) == len(ratings) == 24
    for row, rating in zip(rows, ratings, strict=True):
        reply = rating.response
        assert row["study"] == "'" + STUDY_NAME
        assert row["item"] == built.cell(reply.external_id or str(reply.pk))
        assert row["context"] == built.cell(reply.context.external_id or str(reply.context.pk))
        assert row["system"] == built.cell(reply.system.name)
        assert row["annotator"] == "'" + rating.annotator.pseudonym
        assert row["question"] == built.cell(rating.question.name)
        # numbers are written as numbers: no quote, not even before a minus sign
        assert (row["response_id"], row["value"]) == (str(reply.pk), str(rating.value))
        assert row["seconds"] == _seconds(rating.seconds_spent)
    assert "-1" in {row["value"] for row in rows}
    assert {row["system"] for row in rows} == {"'" + PAYLOAD, "human"}
    assert {row["question"] for row in rows} == {"appropriateness", "'-fluency"}
    assert any(row["item"].startswith("'=") for row in rows)
    assert any(row["context"] in ("'\rdlg,1", "'-2") for row in rows)


@pytest.mark.parametrize("route", ROUTES)
def test_references_csv_neutralises_the_written_text(route):
    built = injected_study()
    rows = _rows(ROUTES[route](built.study, "references"))
    references = list(
        Reference.objects.filter(context__study=built.study, origin="collected")
        .select_related("context")
        .order_by("pk")
    )
    assert [row["text"] for row in rows] == ["'" + PAYLOAD, "'-5\r=1+1"]
    assert {row["author"] for row in rows} == {"'@writer"}
    assert {row["study"] for row in rows} == {"'" + STUDY_NAME}
    for row, reference in zip(rows, references, strict=True):
        assert row["context"] == built.cell(reference.context.external_id or str(reference.context.pk))
        assert row["reference_id"] == str(reference.pk)
        assert row["seconds"] == _seconds(reference.seconds_spent)
    assert [row["client_seconds"] for row in rows] == ["12.25", "0.5"]  # numbers stay numbers


@pytest.mark.parametrize("route", ROUTES)
def test_diversity_csv_neutralises_names_and_reply_ids(route):
    built = injected_study()
    (row,) = _rows(ROUTES[route](built.study, "diversity"))
    assert row["study"] == "'" + STUDY_NAME
    assert row["system"] == "'" + PAYLOAD
    assert row["annotator"] == "'-judge"
    # the first appropriate reply has an external id "=r-..."; the list is one text cell
    assert row["appropriate"].startswith("'=r-")
    assert ";" in row["appropriate"]
    assert (row["replies"], row["meanings"], row["client_seconds"]) == ("3", "2", "20.0")
