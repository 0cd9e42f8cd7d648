"""The importers on the real corpora in ../shared/data (skipped, saying so, when they are absent).

The expected counts come from each data set's SOURCE.txt and were checked against the files.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from annotation.importers import ImportFile
from annotation.models import (
    Annotator,
    DialogContext,
    ImportedMeanRating,
    Rating,
    Reference,
    Response,
    System,
)
from annotation.services.imports import study_import
from annotation.services.studies import study_create

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]


def _read(path: Path) -> ImportFile:
    return ImportFile(name=path.name, data=path.read_bytes())


def test_dailydialog_test_split_gives_6740_contexts_with_labels(shared_data, researcher):
    folder = shared_data / "dailydialog" / "test"
    study = study_create(owner=researcher, name="dailydialog test")
    files = [
        _read(folder / name)
        for name in ("dialogues_test.txt", "dialogues_act_test.txt", "dialogues_emotion_test.txt")
    ]
    record = study_import(study=study, format="dailydialog", files=files)

    assert DialogContext.objects.filter(study=study).count() == 6740
    assert Reference.objects.filter(context__study=study, origin="original").count() == 6740
    assert record.warnings == []
    # multirefeval's context_id 73_4 names a context of 5 turns (its CSV "context" column has 5).
    assert len(DialogContext.objects.get(study=study, external_id="73_4").turns) == 5
    first = DialogContext.objects.get(study=study, external_id="0_1").turns
    assert first[1] == {"speaker": "B", "text": "Some what ?", "act": "question", "emotion": "surprise"}


def test_dailydialog_train_split_warns_about_its_one_label_mismatch(shared_data, researcher):
    folder = shared_data / "dailydialog" / "train"
    study = study_create(owner=researcher, name="dailydialog train")
    files = [_read(folder / name) for name in ("dialogues_train.txt", "dialogues_act_train.txt")]
    record = study_import(study=study, format="dailydialog", files=files)

    assert record.counts["contexts_created"] == 76053
    assert record.warnings == [
        "dialogues_act_train.txt, line 7852: "
        "11 act labels for a dialogue of 12 utterances; its act labels are dropped"
    ]


def test_multireftest_gives_6740_contexts_with_their_references(shared_data, researcher):
    study = study_create(owner=researcher, name="multiref", scale="1-5")
    started = time.perf_counter()
    record = study_import(
        study=study, format="multiref", files=[_read(shared_data / "multirefeval" / "multireftest.json")]
    )
    elapsed = time.perf_counter() - started
    print(f"multireftest.json imported in {elapsed:.1f} s")  # shown with -s; never asserted (bench/ times)

    assert DialogContext.objects.filter(study=study).count() == 6740
    references = Reference.objects.filter(context__study=study)
    assert references.filter(origin="original").count() == 6740
    # 33,700 given; exact duplicates within a context and one empty reference are dropped.
    assert record.counts["references_created"] == references.count()
    assert 33_500 < references.count() < 33_700
    context = DialogContext.objects.get(study=study, external_id="73_4")
    assert len(context.turns) == 5
    assert context.references.get(origin="original").text == "then tell me something about your background ."


def test_multiref_ratings_after_multiref_reuse_the_contexts(shared_data, researcher):
    folder = shared_data / "multirefeval"
    study = study_create(owner=researcher, name="multiref ratings", scale="1-5")
    study_import(study=study, format="multiref", files=[_read(folder / "multireftest.json")])
    references_before = Reference.objects.filter(context__study=study).count()

    record = study_import(
        study=study, format="multiref-ratings", files=[_read(folder / "mturk_rating_processed_output.csv")]
    )

    assert record.counts["contexts_reused"] == 100
    assert record.counts["contexts_created"] == 0
    # The CSV tokenizes the same text differently ("I'm" / "i 'm"); that alone is no warning.
    assert record.warnings == []
    assert Reference.objects.filter(context__study=study).count() == references_before
    assert Response.objects.filter(context__study=study).count() == 500
    assert ImportedMeanRating.objects.filter(response__context__study=study).count() == 500
    assert sorted(System.objects.filter(study=study).values_list("name", "is_human")) == [
        ("CVAEf", False),
        ("dualencoder_train", False),
        ("hredf", False),
        ("human", True),
        ("seq2seqf", False),
    ]
    mean = ImportedMeanRating.objects.get(
        response__system__name="human", response__context__external_id="73_4"
    )
    assert mean.value == pytest.approx(4.8)


def test_multiref_ratings_alone_build_their_100_contexts(shared_data, researcher):
    study = study_create(owner=researcher, name="ratings only", scale="1-5")
    record = study_import(
        study=study,
        format="multiref-ratings",
        files=[_read(shared_data / "multirefeval" / "mturk_rating_processed_output.csv")],
    )

    assert record.counts["contexts_created"] == 100
    assert Response.objects.filter(context__study=study).count() == 500
    # prevgt plus the 3 further references of all_references (which repeats prevgt).
    assert Reference.objects.filter(context__study=study).count() == 400


def test_grade_dailydialog_gives_300_replies_with_their_individual_scores(shared_data, researcher):
    study = study_create(owner=researcher, name="grade", scale="1-5")
    record = study_import(
        study=study,
        format="grade",
        files=[_read(shared_data / "grade-dailydialog" / "human_judgement_dailydialog.jsonl")],
    )

    assert Response.objects.filter(context__study=study).count() == 300
    # 150 items per system, but one context is rated twice for each system: 149 distinct contexts.
    assert DialogContext.objects.filter(study=study).count() == 149
    assert Rating.objects.filter(response__context__study=study).count() == 2990
    # One anonymous annotator per position of HumanScores (up to 11 scores a reply), not one per score.
    assert Annotator.objects.filter(study=study, origin="imported").count() == 11
    assert not Annotator.objects.filter(study=study, identity_known=True).exists()
    assert System.objects.filter(study=study).count() == 2
    assert Response.objects.filter(context__study=study, sample_index=1).count() == 2
    assert len(record.warnings) == 2
