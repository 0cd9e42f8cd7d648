"""The import_study management command."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import ImportedMeanRating, Question, Response, Study, StudyImport
from annotation.services.studies import study_create
from tests.factories import ResearcherFactory, UserFactory

RATINGS_CSV = (
    "model,context_id,human_average_rating,response,prevgt,all_references,context\n"
    'human,3_0,4.5,"sure , at six .",see you at six .,see you at six .,"Dinner tonight ?"\n'
    "bot,3_0,1.5,i like trains .,see you at six .,see you at six .,Dinner tonight ?\n"
)


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_study", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_creates_the_study_with_the_formats_default_scale_and_the_only_researcher(tmp_path, researcher):
    path = tmp_path / "mturk.csv"
    path.write_text(RATINGS_CSV, encoding="utf-8")

    out, _ = run("--format", "multiref-ratings", "--study", "MTurk", str(path))

    study = Study.objects.get(name="MTurk")
    assert study.owner == researcher
    question = Question.objects.get(study=study)
    assert (question.scale_min, question.scale_max) == (1, 5)
    assert ImportedMeanRating.objects.filter(response__context__study=study).count() == 2
    assert "responses created: 2" in out
    assert StudyImport.objects.get(study=study).created_by == researcher


@pytest.mark.django_db
def test_imports_into_an_existing_study_with_a_chosen_question(tmp_path, researcher):
    study = study_create(owner=researcher, name="Existing", scale="1-5")
    path = tmp_path / "items.jsonl"
    path.write_text(
        json.dumps({"context": ["Hi ."], "response": "hey .", "system": "s"}) + "\n", encoding="utf-8"
    )

    run("--format", "jsonl", "--study", "Existing", "--question", "appropriateness", str(path))

    assert Response.objects.filter(context__study=study).count() == 1
    assert Study.objects.count() == 1


@pytest.mark.django_db
def test_a_rejected_import_prints_every_problem_and_leaves_no_new_study(tmp_path, researcher):
    path = tmp_path / "bad.csv"
    path.write_text(RATINGS_CSV.replace("4.5", "9").replace("1.5", "x"), encoding="utf-8")

    err = StringIO()
    with pytest.raises(CommandError, match="import rejected, nothing was changed: 2 problems"):
        call_command("import_study", "--format", "multiref-ratings", "--study", "New", str(path), stderr=err)
    assert err.getvalue().splitlines() == [
        'bad.csv, line 2, field "human_average_rating": 9 is outside the study\'s scale 1-5',
        "bad.csv, line 3, field \"human_average_rating\": 'x' is not a number",
    ]
    assert not Study.objects.filter(name="New").exists()


@pytest.mark.django_db
def test_an_explicit_owner_and_scale(tmp_path, researcher):
    owner = UserFactory.create(username="bob")
    path = tmp_path / "dialogues_test.txt"
    path.write_text("Hi . __eou__ Hello . __eou__\n", encoding="utf-8")

    run(
        "--format",
        "dailydialog",
        "--study",
        "DD",
        "--owner",
        "bob",
        "--scale",
        "1-5",
        "--language",
        "en",
        str(path),
    )

    study = Study.objects.get(name="DD")
    assert study.owner == owner
    assert Question.objects.get(study=study).scale_max == 5


@pytest.mark.django_db
def test_without_a_single_researcher_the_owner_must_be_given(tmp_path):
    ResearcherFactory.create(username="r1")
    ResearcherFactory.create(username="r2")
    path = tmp_path / "dialogues_test.txt"
    path.write_text("Hi . __eou__ Hello . __eou__\n", encoding="utf-8")

    with pytest.raises(CommandError, match="give --owner"):
        run("--format", "dailydialog", "--study", "DD", str(path))
    with pytest.raises(CommandError, match="cannot read"):
        run("--format", "dailydialog", "--study", "DD", "--owner", "r1", str(tmp_path / "missing.txt"))
    assert not Study.objects.exists()
