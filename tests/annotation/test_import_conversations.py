"""The conversations-jsonl format (docs/conversations.md): every bot turn after the first becomes a reply
to the turns before it, bad files are refused whole, and importing again duplicates nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.importers import ImportFile, ImportProblem, ImportRejected
from annotation.models import DialogContext, Response, System
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from annotation.study_data.forms import StudyImportForm

FORMAT = "conversations-jsonl"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "conversations.md"

CONVERSATION = {
    "id": "conv-1",
    "system": "bot-a",
    "bot": "bot",
    "turns": [
        {"speaker": "user", "text": "hi"},
        {"speaker": "bot", "text": "hello!"},
        {"speaker": "user", "text": "how are you?"},
        {"speaker": "user", "text": "still there?"},
        {"speaker": "bot", "text": "fine, thanks."},
        {"speaker": "user", "text": "bye"},
    ],
}


def _lines(*records: dict, name: str = "talks.jsonl") -> ImportFile:
    return ImportFile(
        name=name, data="".join(json.dumps(record) + "\n" for record in records).encode("utf-8")
    )


def _row_counts() -> dict[str, int]:
    return {
        model.__name__: model._default_manager.count()
        for model in apps.get_app_config("annotation").get_models()
    }


def _rejected(study, *files: ImportFile) -> list[ImportProblem]:
    before = _row_counts()
    with pytest.raises(ImportRejected) as error:
        study_import(study=study, format=FORMAT, files=list(files))
    assert _row_counts() == before
    assert str(error.value).startswith("import rejected, nothing was changed")
    return error.value.problems


@pytest.fixture
def study(researcher):
    return study_create(owner=researcher, name="conversations")


@pytest.mark.django_db
def test_every_bot_turn_after_the_first_becomes_a_reply_to_the_turns_before_it(study):
    record = study_import(study=study, format=FORMAT, files=[_lines(CONVERSATION)])

    contexts = {context.external_id: context for context in DialogContext.objects.filter(study=study)}
    assert sorted(contexts) == ["conv-1#1", "conv-1#4"]
    assert contexts["conv-1#1"].turns == [{"speaker": "user", "text": "hi"}]
    assert contexts["conv-1#4"].turns == CONVERSATION["turns"][:4]  # the bot's own earlier turn included
    assert contexts["conv-1#1"].position < contexts["conv-1#4"].position
    replies = {
        reply.context.external_id: (reply.system.name, reply.text, reply.external_id)
        for reply in Response.objects.filter(context__study=study).select_related("context", "system")
    }
    assert replies == {
        "conv-1#1": ("bot-a", "hello!", "conv-1#1"),
        "conv-1#4": ("bot-a", "fine, thanks.", "conv-1#4"),
    }
    assert record.counts["contexts_created"] == 2
    assert record.counts["responses_created"] == 2
    assert record.counts["systems_created"] == 1
    assert record.warnings == []


@pytest.mark.django_db
def test_the_documented_example_imports_as_the_documentation_says(study):
    block = re.search(r"```jsonl\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    assert block is not None, "docs/conversations.md must hold a ```jsonl example"
    study_import(study=study, format=FORMAT, files=[ImportFile("talks.jsonl", block.group(1).encode())])

    replies = dict(Response.objects.filter(context__study=study).values_list("context__external_id", "text"))
    assert replies == {
        "conv-1#1": "hello! how are you?",
        "conv-1#3": "sorry to hear that. want to talk about it?",
        "conv-2#2": "what are you up to?",  # "bot" is the default speaker; its opening turn has no context
    }
    assert sorted(System.objects.filter(study=study).values_list("name", flat=True)) == ["bot-a", "bot-b"]
    assert len(DialogContext.objects.get(study=study, external_id="conv-1#3").turns) == 3


@pytest.mark.django_db
def test_the_bot_may_be_any_speaker_and_integer_ids_are_text(study):
    line = {
        "id": 7,
        "system": " agent-x ",
        "bot": "agent",
        "turns": [{"speaker": "agent", "text": "hello"}, {"speaker": "human", "text": "hi"}, {"speaker": "agent", "text": " how can i help? "}],
    }  # fmt: skip
    study_import(study=study, format=FORMAT, files=[_lines(line)])

    reply = Response.objects.select_related("context", "system").get(context__study=study)
    assert (reply.context.external_id, reply.system.name, reply.text) == ("7#2", "agent-x", "how can i help?")
    assert [turn["speaker"] for turn in reply.context.turns] == ["agent", "human"]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"id": None}, "id", "missing required key"),
        ({"id": ["x"]}, "id", "must be a string or an integer"),
        ({"system": ""}, "system", "must be a non-empty string"),
        ({"system": "s" * 121}, "system", "longer than 120 characters"),
        ({"turns": []}, "turns", "must be a non-empty list"),
        ({"turns": "hi"}, "turns", "must be a non-empty list"),
        ({"turns": [{"speaker": "user", "text": "hi"}, "hello"]}, "turns[1]", "must be an object"),
        ({"turns": [{"speaker": "user", "text": "hi"}, {"speaker": "bot", "text": ""}]}, "turns[1].text", "must be a non-empty string"),
        ({"turns": [{"speaker": "user", "text": "hi"}, {"speaker": 3, "text": "yo"}]}, "turns[1].speaker", "must be a non-empty string"),
        ({"turns": [{"text": "hi"}]}, "turns[0].speaker", "missing"),
        ({"bot": "assistant"}, "bot", 'the bot speaker "assistant" never speaks in "turns" (speakers: user, bot)'),
        ({"bot": 1}, "bot", "must be a non-empty string"),
        ({"id": "c" * 199}, "id", "ids must fit in 200 characters"),
    ],
)  # fmt: skip
@pytest.mark.django_db
def test_a_bad_line_is_named_by_file_line_and_field_and_nothing_is_written(study, change, field, message):
    study_import(study=study, format=FORMAT, files=[_lines({**CONVERSATION, "id": "already-there"})])
    bad = {
        key: value for key, value in {**CONVERSATION, "id": "conv-2", **change}.items() if value is not None
    }
    problems = _rejected(study, _lines(CONVERSATION, bad, name="bad.jsonl"))

    assert len(problems) == 1
    assert (problems[0].file, problems[0].line, problems[0].field) == ("bad.jsonl", 2, field)
    assert message in problems[0].message
    assert str(problems[0]).startswith(f'bad.jsonl, line 2, field "{field}": ')


@pytest.mark.django_db
def test_ids_are_unique_across_the_files_of_an_import(study):
    problems = _rejected(
        study,
        _lines(CONVERSATION, name="a.jsonl"),
        _lines({**CONVERSATION, "system": "bot-b"}, name="b.jsonl"),
    )
    assert [str(problem) for problem in problems] == [
        "b.jsonl, line 1, field \"id\": id 'conv-1' was already used on a.jsonl, line 1"
    ]


@pytest.mark.django_db
def test_every_problem_of_a_file_is_listed_at_once(study):
    data = (
        json.dumps(CONVERSATION)
        + "\n"
        + "{not json\n"
        + json.dumps({**CONVERSATION, "id": "conv-3", "system": ""})
        + "\n"
    )
    problems = _rejected(study, ImportFile("talks.jsonl", data.encode()))
    assert [(problem.line, problem.field) for problem in problems] == [(2, None), (3, "system")]


@pytest.mark.django_db
def test_importing_the_same_file_again_is_refused_and_duplicates_nothing(study):
    file = _lines(CONVERSATION)
    study_import(study=study, format=FORMAT, files=[file])
    problems = _rejected(study, file)

    assert len(problems) == 2  # one per reply
    assert "(was this file imported before?)" in str(problems[0])
    assert DialogContext.objects.filter(study=study).count() == 2
    assert Response.objects.filter(context__study=study).count() == 2


@pytest.mark.django_db
def test_another_system_on_the_same_conversation_reuses_its_contexts(study):
    study_import(study=study, format=FORMAT, files=[_lines(CONVERSATION)])
    record = study_import(study=study, format=FORMAT, files=[_lines({**CONVERSATION, "system": "bot-b"})])

    assert record.counts["contexts_created"] == 0
    assert record.counts["contexts_reused"] == 2
    assert DialogContext.objects.filter(study=study).count() == 2
    assert Response.objects.filter(context__study=study, system__name="bot-b").count() == 2


@pytest.mark.django_db
def test_a_conversation_id_of_the_study_with_other_turns_is_refused(study):
    study_import(study=study, format=FORMAT, files=[_lines(CONVERSATION)])
    other_turns = [{"speaker": "user", "text": "good morning"}, *CONVERSATION["turns"][1:]]
    problems = _rejected(study, _lines({**CONVERSATION, "system": "bot-b", "turns": other_turns}))

    assert len(problems) == 1  # said once for the line, not once per turn
    assert str(problems[0]) == (
        'talks.jsonl, line 1, field "id": context id "conv-1#1" is already in the study with different turns; '
        "give this conversation an id of its own"
    )


@pytest.mark.django_db
def test_a_bot_that_only_speaks_first_has_nothing_to_score(study):
    opener = {
        **CONVERSATION,
        "id": "conv-2",
        "turns": [{"speaker": "bot", "text": "hi"}, {"speaker": "user", "text": "hey"}],
    }
    record = study_import(study=study, format=FORMAT, files=[_lines(CONVERSATION, opener)])

    assert record.counts["responses_created"] == 2
    assert record.warnings == [
        'talks.jsonl, line 2, field "turns": the bot speaker "bot" only speaks first; '
        "this conversation has no reply to score"
    ]
    only_opener = _rejected(study, _lines(opener, name="opener.jsonl"))
    assert str(only_opener[0]) == "opener.jsonl: no records found to import"


@pytest.mark.django_db
def test_the_format_is_offered_by_the_upload_form_and_the_api(study):
    assert f'<option value="{FORMAT}">' in str(StudyImportForm(study=study)["format"])
    client = APIClient()
    client.force_authenticate(study.owner)
    upload = SimpleUploadedFile("talks.jsonl", json.dumps(CONVERSATION).encode())
    answer = client.post(
        f"/api/studies/{study.pk}/imports/", {"format": FORMAT, "files": [upload]}, format="multipart"
    )
    assert answer.status_code == 201, answer.content
    assert Response.objects.filter(context__study=study).count() == 2
