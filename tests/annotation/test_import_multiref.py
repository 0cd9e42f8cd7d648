"""The multiref importer (multireftest.json layout) on a small project-written file."""

from __future__ import annotations

import json

import pytest

from annotation.importers import ImportFile
from annotation.models import DialogContext, Reference
from annotation.services.imports import study_import
from annotation.services.studies import study_create

DIALOGUES = [
    {
        "fold": "test",
        "topic": "weather",
        "dialogue": [
            {"emotion": "no_emotion", "act": "question", "text": "Is it raining outside ?",
             "responses": ["yes , take an umbrella .", "no , it is sunny .", "yes , take an umbrella .",
                           "   ", "a little ."]},
            {"emotion": "sadness", "act": "inform", "text": "Yes , take an umbrella .",
             "responses": ["thanks , i will .", "oh no , i left it at home ."]},
            {"emotion": "no_emotion", "act": "inform", "text": "Thanks , I will ."},
        ],
    },
    {
        "fold": "test",
        "topic": "food",
        "dialogue": [
            {"emotion": "happiness", "act": "directive", "text": "Let us have pizza tonight !",
             "responses": ["great idea !"]},
            {"emotion": "happiness", "act": "commissive", "text": "Great idea !"},
        ],
    },
]  # fmt: skip


def _file(records: list[dict], name: str = "multireftest.json") -> ImportFile:
    return ImportFile(name=name, data="".join(json.dumps(r) + "\n" for r in records).encode("utf-8"))


@pytest.mark.django_db
def test_each_turn_with_responses_becomes_a_context_with_its_references(researcher):
    study = study_create(owner=researcher, name="multiref", scale="1-5")
    record = study_import(study=study, format="multiref", files=[_file(DIALOGUES)])

    contexts = {context.external_id: context for context in DialogContext.objects.filter(study=study)}
    assert sorted(contexts) == ["0_0", "0_1", "1_0"]
    assert contexts["0_1"].turns == [
        {"speaker": "A", "text": "Is it raining outside ?", "act": "question", "emotion": "no_emotion"},
        {"speaker": "B", "text": "Yes , take an umbrella .", "act": "inform", "emotion": "sadness"},
    ]
    first = list(Reference.objects.filter(context=contexts["0_0"]).values_list("text", "origin"))
    # The duplicate third reference and the blank fourth are dropped; the first is the corpus's reply.
    assert first == [
        ("yes , take an umbrella .", "original"),
        ("no , it is sunny .", "imported"),
        ("a little .", "imported"),
    ]
    assert record.counts["references_created"] == 6
    assert record.warnings == ['multireftest.json, line 1, field "dialogue[0].responses[3]": empty; skipped']


@pytest.mark.django_db
def test_multiref_contexts_line_up_with_dailydialog_ids(researcher):
    """Importing the same dialogues as DailyDialog text first reuses those contexts by id."""
    study = study_create(owner=researcher, name="both")
    dialogues = "Is it raining outside ? __eou__ Yes , take an umbrella . __eou__ Thanks , I will . __eou__\n"
    study_import(
        study=study, format="dailydialog", files=[ImportFile("dialogues_test.txt", dialogues.encode())]
    )

    record = study_import(study=study, format="multiref", files=[_file(DIALOGUES[:1])])

    assert record.counts["contexts_reused"] == 2
    assert record.counts["contexts_created"] == 0
    assert record.warnings[-1:] == [
        'multireftest.json, line 1, field "dialogue[0].responses[3]": empty; skipped'
    ]
    # The original reply differs in case from DailyDialog's, so both are kept.
    assert Reference.objects.filter(context__external_id="0_0").count() == 4
