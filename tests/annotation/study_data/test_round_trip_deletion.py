"""deleting a system with everything that hangs on its replies, and undoing an import, each behind
a confirmation that names what goes (page and API); refused, with the reason, where it cannot be done
cleanly. Real database, real services; the scoring rows are the scoring app's own models."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse

from annotation.importers import ImportFile
from annotation.models import (
    Annotator,
    Assignment,
    DialogContext,
    ImportedMeanRating,
    Rating,
    Reference,
    Response,
    Study,
    StudyImport,
    System,
    WorkItem,
)
from annotation.services.assignment import next_assignment
from annotation.services.deletion_counts import DeletionRefused
from annotation.services.import_undo import import_undo, import_undo_preview
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from annotation.services.submissions import rating_submit
from annotation.services.system_deletion import system_delete, system_deletion_preview
from scoring.models import ContextSystemScore, MetricScore, PerReferenceScore, SystemMetricScore
from tests.api.work_api_support import client_for, members
from tests.correlation.builders import signature
from tests.factories import AnnotatorFactory, ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db


def _jsonl(records: list[dict[str, Any]], name: str) -> ImportFile:
    return ImportFile(name=name, data="".join(json.dumps(r) + "\n" for r in records).encode("utf-8"))


def _replies(system: str, contexts: range, **extra: Any) -> list[dict[str, Any]]:
    return [
        {
            "context_id": f"c{index}",
            "context": [f"question {index} ?"],
            "response": f"{system} answer {index} .",
            "system": system,
            "references": [f"reference {index} ."],
            **extra,
        }
        for index in contexts
    ]


@pytest.fixture
def study(researcher) -> Study:
    study = study_create(owner=researcher, name="deletions", ratings_per_item=2)
    study.check_interval = 0
    study.save()
    return study


@pytest.fixture
def scored(study):
    """Two systems on three contexts: "bad-bot" rated by two named raters (and one mean), both scored."""
    rated = {"ratings": {"appropriateness": [0, 1]}, "annotators": ["ann", "bob"]}
    study_import(
        study=study, format="jsonl", files=[_jsonl(_replies("bad-bot", range(3), **rated), "bad.jsonl")]
    )
    study_import(study=study, format="jsonl", files=[_jsonl(_replies("good-bot", range(3)), "good.jsonl")])
    ImportedMeanRating.objects.create(
        response=Response.objects.get(text="bad-bot answer 0 ."),
        question=study.questions.get(),
        value=0.5,
        raters=4,
    )
    bleu, multi, distinct = signature("bleu-2"), signature("bleu-2", refs="multi"), signature("distinct-1")
    for response in Response.objects.filter(context__study=study):
        MetricScore.objects.create(response=response, signature=bleu, value=0.25)
        PerReferenceScore.objects.create(signature=multi, response=response, references_key="k", values=[0.1])
    per_context = signature("distinct-1", extra="|level:context")
    for system in System.objects.filter(study=study):
        SystemMetricScore.objects.create(system=system, signature=distinct, value=0.5, items=3)
        for context in study.contexts.all():
            ContextSystemScore.objects.create(
                signature=per_context, system=system, context=context, inputs_key="k", value=0.5
            )
    return study


# --- deleting a system ------------------------------------------------------------------------------------


def test_the_preview_names_every_row_that_goes_and_the_deletion_removes_exactly_those(scored, committed):
    bad = System.objects.get(study=scored, name="bad-bot")
    preview = system_deletion_preview(system=bad)

    assert preview.allowed
    assert preview.counts == {
        "annotation.System": 1,
        "annotation.Response": 3,
        "annotation.Rating": 6,
        "annotation.ImportedMeanRating": 1,
        "annotation.WorkItem": 3,
        "scoring.MetricScore": 3,
        "scoring.PerReferenceScore": 3,
        "scoring.SystemMetricScore": 1,
        "scoring.ContextSystemScore": 3,
    }
    assert preview.lines == [
        "1 system",
        "3 replies",
        "6 ratings",
        "1 imported mean rating",
        "3 metric scores",
        "1 system-level metric score",
        "3 per-reference score sets (references curve)",
        "3 diversity metric values of systems on contexts (diversity table)",
        "3 work items",
    ]
    version = Study.objects.get(pk=scored.pk).data_version
    with committed():
        deleted = system_delete(study=scored, system_id=bad.pk, fingerprint=preview.fingerprint)

    assert deleted == preview.counts
    assert not System.objects.filter(pk=bad.pk).exists()
    assert not Response.objects.filter(text__startswith="bad-bot").exists()
    assert Rating.objects.filter(response__context__study=scored).count() == 0
    good = System.objects.get(study=scored, name="good-bot")
    assert Response.objects.filter(system=good).count() == 3
    assert MetricScore.objects.filter(response__system=good).count() == 3
    assert SystemMetricScore.objects.filter(system=good).count() == 1
    # Contexts, references and annotators stay; the report's data version moves on.
    assert DialogContext.objects.filter(study=scored).count() == 3
    assert Reference.objects.filter(context__study=scored).count() == 3
    assert Annotator.objects.filter(study=scored).count() == 2
    assert Study.objects.get(pk=scored.pk).data_version == version + 1


def test_volunteer_work_on_the_system_is_counted_and_named(scored):
    [member] = members(scored, 1)
    handed = next_assignment(annotator=member.annotator)
    rating_submit(
        annotator=member.annotator, assignment_id=handed.assignment.pk, values={"appropriateness": 2}
    )
    rated = handed.assignment.item.response
    assert rated is not None
    system = rated.system
    preview = system_deletion_preview(system=system)

    assert preview.counts["annotation.Assignment"] == 1
    ratings = Rating.objects.filter(response__system=system).count()
    assert preview.counts["annotation.Rating"] == ratings
    assert f"1 of the {ratings} ratings were given in this app, by 1 annotator." in preview.notes
    system_delete(study=scored, system_id=system.pk, fingerprint=preview.fingerprint)
    assert not Assignment.objects.filter(annotator=member.annotator).exists()
    assert Annotator.objects.filter(pk=member.annotator.pk).exists()  # the volunteer stays


def test_a_deletion_whose_rows_changed_since_the_confirmation_is_refused(scored):
    bad = System.objects.get(study=scored, name="bad-bot")
    shown = system_deletion_preview(system=bad)
    Rating.objects.create(
        annotator=AnnotatorFactory.create(study=scored, pseudonym="late"),
        response=Response.objects.get(text="bad-bot answer 1 ."),
        question=scored.questions.get(),
        value=2,
    )
    with pytest.raises(DeletionRefused, match="has changed since the confirmation was shown"):
        system_delete(study=scored, system_id=bad.pk, fingerprint=shown.fingerprint)
    assert Response.objects.filter(system=bad).count() == 3


def test_the_confirmation_page_names_what_goes_and_a_post_with_csrf_deletes(scored):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(scored.owner)
    bad = System.objects.get(study=scored, name="bad-bot")
    url = reverse("annotation:study-system-delete", args=[scored.pk, bad.pk])

    page = client.get(url)
    text = page.content.decode()
    assert page.status_code == 200
    for line in (
        "3 replies",
        "6 ratings",
        "1 imported mean rating",
        "3 metric scores",
        "1 system-level metric score",
    ):
        assert f"<li>{line}</li>" in text
    assert "system “bad-bot”" in text
    assert (
        client.post(url, {"fingerprint": page.context["preview"].fingerprint}).status_code == 403
    )  # no CSRF
    assert System.objects.filter(pk=bad.pk).exists()

    token = (
        page.cookies["csrftoken"].value if "csrftoken" in page.cookies else client.cookies["csrftoken"].value
    )
    refused = client.post(url, {"fingerprint": "stale", "csrfmiddlewaretoken": token})
    assert refused.status_code == 409
    assert System.objects.filter(pk=bad.pk).exists()
    done = client.post(
        url, {"fingerprint": page.context["preview"].fingerprint, "csrfmiddlewaretoken": token}, follow=True
    )
    assert done.redirect_chain[-1][0] == reverse("annotation:study-detail", args=[scored.pk])
    assert "Deleted system “bad-bot”: 1 system, 3 replies, 6 ratings" in done.content.decode()
    assert not System.objects.filter(pk=bad.pk).exists()


def test_other_researchers_and_annotators_get_404_and_delete_nothing(client, scored):
    bad = System.objects.get(study=scored, name="bad-bot")
    record = StudyImport.objects.get(study=scored, filenames=["bad.jsonl"])
    intruder = ResearcherFactory.create(username="mallory")
    volunteer = UserFactory.create(username="volunteer")
    AnnotatorFactory.create(study=scored, user=volunteer, pseudonym="annotator-9")
    fingerprint = system_deletion_preview(system=bad).fingerprint
    for user in (intruder, volunteer):
        client.force_login(user)
        for url in (
            reverse("annotation:study-system-delete", args=[scored.pk, bad.pk]),
            reverse("annotation:study-import-undo", args=[scored.pk, record.pk]),
        ):
            assert client.get(url).status_code == 404
            assert client.post(url, {"fingerprint": fingerprint}).status_code == 404
    api = client_for(intruder)
    assert api.get(f"/api/studies/{scored.pk}/systems/{bad.pk}/").status_code == 404
    assert api.delete(f"/api/studies/{scored.pk}/systems/{bad.pk}/").status_code == 404
    assert api.delete(f"/api/studies/{scored.pk}/imports/{record.pk}/").status_code == 404
    assert System.objects.filter(pk=bad.pk).exists()
    assert StudyImport.objects.get(pk=record.pk).undone_at is None
    # Another study's system through this study's URL is not found either.
    other = study_create(owner=scored.owner, name="other")
    stranger = System.objects.create(study=other, name="x")
    client.force_login(scored.owner)
    assert (
        client.get(reverse("annotation:study-system-delete", args=[scored.pk, stranger.pk])).status_code
        == 404
    )


def test_the_api_shows_and_deletes(scored):
    api = client_for(scored.owner)
    bad = System.objects.get(study=scored, name="bad-bot")
    shown = api.get(f"/api/studies/{scored.pk}/systems/{bad.pk}/").json()
    assert shown["name"] == "bad-bot"
    assert shown["delete"]["lines"][:3] == ["1 system", "3 replies", "6 ratings"]

    conflict = api.delete(f"/api/studies/{scored.pk}/systems/{bad.pk}/?fingerprint=old")
    assert conflict.status_code == 409
    assert "has changed" in conflict.json()["detail"]
    done = api.delete(
        f"/api/studies/{scored.pk}/systems/{bad.pk}/?fingerprint={shown['delete']['fingerprint']}"
    )
    assert done.status_code == 200
    assert done.json()["deleted"]["annotation.Response"] == 3
    assert api.get(f"/api/studies/{scored.pk}/systems/{bad.pk}/").status_code == 404


# --- undoing an import ------------------------------------------------------------------------------------


def test_undo_deletes_what_the_import_created_and_keeps_what_it_reused(study, committed):
    first = study_import(study=study, format="jsonl", files=[_jsonl(_replies("s1", range(2)), "first.jsonl")])
    rated = {"ratings": {"appropriateness": [2]}, "annotators": ["cy"]}
    second = study_import(
        study=study,
        format="jsonl",
        files=[
            _jsonl(
                [
                    *_replies("s2", range(3), **rated),
                    {"context_id": "c5", "context": ["new ?"], "response": "again .", "system": "s1"},
                ],
                "second.jsonl",
            )
        ],
    )
    assert second.counts["contexts_reused"] == 2
    ImportedMeanRating.objects.create(
        response=Response.objects.get(text="s2 answer 2 ."), question=study.questions.get(), value=1.5
    )
    score = MetricScore.objects.create(
        response=Response.objects.get(text="s2 answer 0 ."), signature=signature(), value=0.1
    )

    preview = import_undo_preview(record=second)
    assert preview.allowed, preview.refusals
    assert preview.counts == {
        "annotation.DialogContext": 2,
        "annotation.Reference": 1,
        "annotation.System": 1,
        "annotation.Response": 4,
        "annotation.Annotator": 1,
        "annotation.Rating": 3,
        "annotation.ImportedMeanRating": 1,
        "annotation.WorkItem": 4,
        "scoring.MetricScore": 1,
    }
    assert (
        "It reused 2 contexts, 2 references, 1 system already in the study; they stay as they are."
        in preview.notes
    )
    assert any("System-level metric scores of s1" in note for note in preview.notes)
    version = Study.objects.get(pk=study.pk).data_version
    with committed():
        deleted = import_undo(
            study=study, import_id=second.pk, user=study.owner, fingerprint=preview.fingerprint
        )

    assert deleted == preview.counts
    assert not MetricScore.objects.filter(pk=score.pk).exists()
    assert sorted(Response.objects.filter(context__study=study).values_list("text", flat=True)) == [
        "s1 answer 0 .",
        "s1 answer 1 .",
    ]
    assert sorted(DialogContext.objects.filter(study=study).values_list("external_id", flat=True)) == [
        "c0",
        "c1",
    ]
    assert Reference.objects.filter(context__study=study).count() == 2
    assert not Annotator.objects.filter(study=study).exists()
    record = StudyImport.objects.get(pk=second.pk)
    assert record.undone_at is not None
    assert record.undone_by == study.owner
    assert Study.objects.get(pk=study.pk).data_version == version + 1
    assert StudyImport.objects.get(pk=first.pk).undone_at is None
    with pytest.raises(DeletionRefused, match="already undone"):
        import_undo(study=study, import_id=second.pk)


def test_undo_is_refused_while_a_later_import_builds_on_it_and_allowed_after_that_one_is_undone(study):
    named = {"ratings": {"appropriateness": [1]}, "annotators": ["ann"]}
    first = study_import(
        study=study, format="jsonl", files=[_jsonl(_replies("s1", range(2), **named), "first.jsonl")]
    )
    later = study_import(
        study=study,
        format="jsonl",
        files=[
            _jsonl([{"context_id": "c1", "response": "s2 on c1 .", "system": "s2", **named}], "later.jsonl")
        ],
    )
    assert later.counts["annotators_reused"] == 1

    preview = import_undo_preview(record=first)
    assert not preview.allowed
    [refusal] = preview.refusals
    assert refusal.startswith(f"import #{later.pk} (jsonl: later.jsonl, ")
    assert refusal.endswith(
        "added 1 reply to its contexts or of its systems and 1 rating by annotators it created; undo that import first."
    )
    with pytest.raises(DeletionRefused, match=f"import #{later.pk}"):
        import_undo(study=study, import_id=first.pk)
    assert Response.objects.filter(context__study=study).count() == 3

    import_undo(study=study, import_id=later.pk)
    import_undo(study=study, import_id=first.pk)
    assert not Response.objects.filter(context__study=study).exists()
    assert not DialogContext.objects.filter(study=study).exists()


def test_ratings_volunteers_gave_since_the_import_are_listed_and_go_with_it(study):
    record = study_import(
        study=study, format="jsonl", files=[_jsonl(_replies("s1", range(2)), "first.jsonl")]
    )
    [member] = members(study, 1)
    handed = next_assignment(annotator=member.annotator)
    rating_submit(
        annotator=member.annotator, assignment_id=handed.assignment.pk, values={"appropriateness": 1}
    )

    preview = import_undo_preview(record=record)
    assert preview.allowed
    assert preview.counts["annotation.Rating"] == 1
    assert preview.counts["annotation.Assignment"] == 1
    assert (
        "1 of the 1 ratings were given in this app since the import, by 1 annotator; they go with the "
        "replies they rate." in preview.notes
    )
    import_undo(study=study, import_id=record.pk, fingerprint=preview.fingerprint)
    assert not Rating.objects.filter(annotator=member.annotator).exists()
    assert Annotator.objects.filter(pk=member.annotator.pk).exists()
    assert not WorkItem.objects.filter(study=study).exists()


def test_an_import_that_created_nothing_or_predates_undo_says_what_it_cannot_do(study):
    study_import(study=study, format="jsonl", files=[_jsonl(_replies("s1", range(2)), "first.jsonl")])
    only_contexts = ImportFile("dialogues_test.txt", b"Hi . __eou__ Hello . __eou__\n")
    study_import(study=study, format="dailydialog", files=[only_contexts])
    again = study_import(study=study, format="dailydialog", files=[only_contexts])
    assert again.counts["contexts_reused"] == 1

    preview = import_undo_preview(record=again)
    assert preview.allowed
    assert preview.counts == {}
    assert any("created nothing new" in note for note in preview.notes)
    assert any(note.startswith("It reused 1 context, 1 reference") for note in preview.notes)
    assert import_undo(study=study, import_id=again.pk) == {}
    assert DialogContext.objects.filter(study=study, external_id="0_0").exists()

    old = StudyImport.objects.create(study=study, format="grade", filenames=["old.jsonl"], counts={})
    [refusal] = import_undo_preview(record=old).refusals
    assert "made before imports recorded the rows they create" in refusal
    with pytest.raises(DeletionRefused):
        import_undo(study=study, import_id=old.pk)


def test_the_undo_page_names_what_goes_and_refuses_with_the_reason(client, study):
    first = study_import(study=study, format="jsonl", files=[_jsonl(_replies("s1", range(2)), "first.jsonl")])
    later = study_import(
        study=study,
        format="jsonl",
        files=[_jsonl([{"context_id": "c0", "response": "x .", "system": "s2"}], "later.jsonl")],
    )
    client.force_login(study.owner)

    blocked = client.get(reverse("annotation:study-import-undo", args=[study.pk, first.pk])).content.decode()
    assert "This cannot be done" in blocked
    assert f"import #{later.pk} (jsonl: later.jsonl" in blocked
    assert 'id="deletion-form"' not in blocked
    refused = client.post(
        reverse("annotation:study-import-undo", args=[study.pk, first.pk]), {"fingerprint": "x"}
    )
    assert refused.status_code == 409
    assert Response.objects.filter(context__study=study).count() == 3

    page = client.get(reverse("annotation:study-import-undo", args=[study.pk, later.pk]))
    assert "<li>1 reply</li>" in page.content.decode()
    done = client.post(
        reverse("annotation:study-import-undo", args=[study.pk, later.pk]),
        {"fingerprint": page.context["preview"].fingerprint},
        follow=True,
    )
    assert f"Undid import #{later.pk}: 1 system, 1 reply, 1 work item." in done.content.decode()
    assert "undone" in done.content.decode()
    assert Response.objects.filter(context__study=study).count() == 2


def test_the_api_undoes_an_import(study):
    record = study_import(
        study=study, format="jsonl", files=[_jsonl(_replies("s1", range(2)), "first.jsonl")]
    )
    api = client_for(study.owner)
    shown = api.get(f"/api/studies/{study.pk}/imports/{record.pk}/").json()
    assert shown["undo"]["allowed"] is True
    assert "2 replies" in shown["undo"]["lines"]
    done = api.delete(
        f"/api/studies/{study.pk}/imports/{record.pk}/?fingerprint={shown['undo']['fingerprint']}"
    )
    assert done.status_code == 200
    assert done.json()["deleted"]["annotation.Response"] == 2
    again = api.delete(f"/api/studies/{study.pk}/imports/{record.pk}/")
    assert again.status_code == 409
    assert "already undone" in again.json()["detail"]
