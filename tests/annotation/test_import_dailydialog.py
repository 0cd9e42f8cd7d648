"""The dailydialog importer on small project-written dialogue files."""

from __future__ import annotations

import pytest

from annotation.importers import ImportFile, ImportRejected
from annotation.models import DialogContext, Reference, Response
from annotation.services.imports import study_import
from annotation.services.studies import study_create

DIALOGUES = (
    "Good morning , is the library open ? __eou__ Yes , until  six . __eou__ Thanks ! __eou__\n"
    "Do you like tea ? __eou__ I prefer coffee . __eou__\n"
)
ACTS = "2 1 4\n2 1\n"
EMOTIONS = "0 0 4\n0 0\n"


def _file(name: str, text: str) -> ImportFile:
    return ImportFile(name=name, data=text.encode("utf-8"))


@pytest.fixture
def study(researcher):
    return study_create(owner=researcher, name="dd")


@pytest.mark.django_db
def test_every_context_reply_pair_becomes_a_context_with_its_original_reference(study):
    record = study_import(study=study, format="dailydialog", files=[_file("dialogues_test.txt", DIALOGUES)])

    contexts = {context.external_id: context for context in DialogContext.objects.filter(study=study)}
    assert sorted(contexts) == ["0_0", "0_1", "1_0"]
    assert contexts["0_1"].turns == [
        {"speaker": "A", "text": "Good morning , is the library open ?"},
        {"speaker": "B", "text": "Yes , until six ."},  # runs of spaces collapsed
    ]
    references = {ref.context.external_id: (ref.text, ref.origin) for ref in Reference.objects.all()}
    assert references == {
        "0_0": ("Yes , until six .", "original"),
        "0_1": ("Thanks !", "original"),
        "1_0": ("I prefer coffee .", "original"),
    }
    assert Response.objects.count() == 0
    assert record.counts["contexts_created"] == 3
    assert record.counts["references_created"] == 3
    assert [c.position for c in DialogContext.objects.order_by("position")] == [0, 1, 2]


@pytest.mark.django_db
def test_act_and_emotion_files_label_the_turns(study):
    files = [
        _file("dialogues_test.txt", DIALOGUES),
        _file("dialogues_act_test.txt", ACTS),
        _file("dialogues_emotion_test.txt", EMOTIONS),
    ]
    study_import(study=study, format="dailydialog", files=files)

    turns = DialogContext.objects.get(study=study, external_id="0_1").turns
    assert turns[0] == {
        "speaker": "A",
        "text": "Good morning , is the library open ?",
        "act": "question",
        "emotion": "no_emotion",
    }
    assert turns[1]["act"] == "inform"


@pytest.mark.django_db
def test_a_label_line_that_does_not_fit_its_dialogue_is_a_warning_and_its_labels_are_dropped(study):
    files = [_file("dialogues_test.txt", DIALOGUES), _file("dialogues_act_test.txt", "2 1 4\n2 1 3\n")]
    record = study_import(study=study, format="dailydialog", files=files)

    assert record.warnings == [
        "dialogues_act_test.txt, line 2: "
        "3 act labels for a dialogue of 2 utterances; its act labels are dropped"
    ]
    assert "act" not in DialogContext.objects.get(study=study, external_id="1_0").turns[0]
    assert DialogContext.objects.get(study=study, external_id="0_0").turns[0]["act"] == "question"


@pytest.mark.django_db
def test_several_dialogue_files_prefix_their_ids_with_the_file_stem(study):
    files = [_file("dialogues_a.txt", DIALOGUES), _file("dialogues_b.txt", "Hi . __eou__ Hello . __eou__\n")]
    study_import(study=study, format="dailydialog", files=files)

    ids = set(DialogContext.objects.filter(study=study).values_list("external_id", flat=True))
    assert ids == {"dialogues_a:0_0", "dialogues_a:0_1", "dialogues_a:1_0", "dialogues_b:0_0"}


@pytest.mark.django_db
def test_a_line_without_end_of_utterance_marks_is_rejected(study):
    with pytest.raises(ImportRejected) as rejected:
        study_import(study=study, format="dailydialog", files=[_file("dialogues_x.txt", '{"json": 1}\n')])

    assert str(rejected.value.problems[0]).startswith(
        'dialogues_x.txt, line 1: the line does not end with "__eou__"'
    )
    assert DialogContext.objects.count() == 0


@pytest.mark.django_db
def test_importing_the_same_dialogues_again_reuses_the_contexts(study):
    files = [_file("dialogues_test.txt", DIALOGUES)]
    study_import(study=study, format="dailydialog", files=files)
    again = study_import(study=study, format="dailydialog", files=files)

    assert again.counts["contexts_created"] == 0
    assert again.counts["contexts_reused"] == 3
    assert again.counts["references_reused"] == 3
    assert DialogContext.objects.count() == 3
    assert Reference.objects.count() == 3
