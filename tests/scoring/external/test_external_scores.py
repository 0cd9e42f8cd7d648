"""Importing metric scores computed elsewhere into a study (scoring/services/external_scores.py) on a real
database: what is stored and under which signature, all or nothing, the checks against the study, the
replacement of earlier values, the deletion of an imported metric, and ``manage.py import_metric_scores``."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Response, Study
from kernel.importing.problems import ImportFile, ImportRejected
from scoring.models import MetricOrigin, MetricScore, MetricSignature
from scoring.selectors import external_metrics_for_study
from scoring.services.external_scores import (
    ExternalMetricNotFound,
    external_metric_delete,
    external_scores_import,
)
from tests.factories import DialogContextFactory, ResponseFactory, StudyFactory, SystemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study() -> Study:
    """Two contexts (c1, c2) answered by two systems; each reply has an external id like "c1-hred"."""
    study = StudyFactory.create(name="external study")
    systems = [SystemFactory.create(study=study, name=name) for name in ("hred", "human")]
    for context_id in ("c1", "c2"):
        context = DialogContextFactory.create(study=study, external_id=context_id)
        for system in systems:
            ResponseFactory.create(
                context=context,
                system=system,
                text=f"{system.name} on {context_id}",
                external_id=f"{context_id}-{system.name}",
            )
    return study


def reply(study: Study, external_id: str) -> Response:
    return Response.objects.get(context__study=study, external_id=external_id)


def csv_file(text: str, name: str = "usr.csv") -> ImportFile:
    return ImportFile(name=name, data=text.encode("utf-8"))


def values(study: Study, signature: str) -> dict[str, float]:
    return {
        score.response.external_id: score.value
        for score in MetricScore.objects.filter(
            signature__text=signature, response__context__study=study
        ).select_related("response")
    }


def test_scores_are_stored_per_reply_under_an_external_signature(study, committed) -> None:
    c2_human = reply(study, "c2-human")
    with committed():
        result = external_scores_import(
            study=study,
            file=csv_file(
                "reply_id,response_id,context_id,system,metric,value,signature\n"
                "c1-hred,,,,usr,0.25,usr-roberta|v1\n"
                "c1-human,,,,usr,0.75,usr-roberta|v1\n"
                f",{c2_human.pk},,,usr,0.5,usr-roberta|v1\n"
                ",,c2,hred,usr,0.125,usr-roberta|v1\n"
                "c1-hred,,,,bleu-2,0.3,\n"
            ),
        )
    assert [(metric.name, metric.replies, metric.replaced) for metric in result.metrics] == [
        ("usr", 4, 0),
        ("bleu-2", 1, 0),
    ]
    usr = MetricSignature.objects.get(text="usr|origin:external|sig:usr-roberta,v1")
    assert (usr.name, usr.origin, usr.parameters) == (
        "usr",
        MetricOrigin.EXTERNAL,
        {"origin": "external", "sig": "usr-roberta,v1"},
    )
    assert values(study, usr.text) == {"c1-hred": 0.25, "c1-human": 0.75, "c2-human": 0.5, "c2-hred": 0.125}
    # an external metric named like a built-in one is its own signature, never the built-in one's
    assert MetricSignature.objects.get(text="bleu-2|origin:external").origin == MetricOrigin.EXTERNAL
    study.refresh_from_db()
    assert study.data_version == 1  # bumped once, after the commit: the cached report is recomputed
    assert "usr (external): 4 replies; signature usr|origin:external|sig:usr-roberta,v1" in result.summary()
    assert [(metric.name, metric.replies) for metric in external_metrics_for_study(study=study)] == [
        ("bleu-2", 1),
        ("usr", 4),
    ]


def test_one_bad_row_and_nothing_is_written(study, committed) -> None:
    other_study_reply = ResponseFactory.create()  # a reply of another study
    text = (
        "reply_id,response_id,context_id,system,metric,value\n"
        "c1-hred,,,,usr,0.25\n"
        "nope,,,,usr,0.5\n"
        f",{other_study_reply.pk},,,usr,0.5\n"
        ",,c9,hred,usr,0.5\n"
        ",,c1,bard,usr,0.5\n"
        "c1-human,,,,usr,nan\n"
    )
    with committed(), pytest.raises(ImportRejected) as rejected:
        external_scores_import(study=study, file=csv_file(text))
    problems = rejected.value.problems
    assert [(p.file, p.line, p.field) for p in problems] == [
        ("usr.csv", 3, "reply_id"),
        ("usr.csv", 4, "response_id"),
        ("usr.csv", 5, "context_id"),
        ("usr.csv", 6, "system"),
        ("usr.csv", 7, "value"),
    ]
    assert 'no reply of this study has the id "nope"' in problems[0].message
    assert f"no reply of this study has the id {other_study_reply.pk}" in problems[1].message
    assert 'no context of this study has the id "c9"' in problems[2].message
    assert 'no system of this study is named "bard" (its systems: "hred", "human")' in problems[3].message
    assert "nothing was changed" in str(rejected.value)
    assert not MetricScore.objects.exists()
    assert not MetricSignature.objects.exists()
    study.refresh_from_db()
    assert study.data_version == 0


def test_one_reply_named_two_ways_twice_is_a_duplicate(study) -> None:
    c1_hred = reply(study, "c1-hred")
    text = f"reply_id,response_id,metric,value\nc1-hred,,usr,0.1\n,{c1_hred.pk},usr,0.2\n"
    with pytest.raises(ImportRejected) as rejected:
        external_scores_import(study=study, file=csv_file(text))
    (problem,) = rejected.value.problems
    assert (problem.line, problem.field) == (3, "response_id")
    assert (
        f'a second value of "usr" for this reply (response {c1_hred.pk}; the first is on line 2)'
        in problem.message
    )


def test_a_system_with_several_replies_to_a_context_must_be_named_by_reply(study) -> None:
    first = reply(study, "c1-hred")
    ResponseFactory.create(context=first.context, system=first.system, sample_index=1, text="another sample")
    with pytest.raises(ImportRejected) as rejected:
        external_scores_import(
            study=study, file=csv_file("context_id,system,metric,value\nc1,hred,usr,0.1\n")
        )
    (problem,) = rejected.value.problems
    assert (problem.line, problem.field) == (2, "system")
    assert 'system "hred" has 2 replies to context "c1"' in problem.message


def test_importing_a_metric_again_replaces_its_values_for_the_replies_in_the_file(study) -> None:
    external_scores_import(
        study=study, file=csv_file("reply_id,metric,value\nc1-hred,usr,0.1\nc1-human,usr,0.2\n")
    )
    result = external_scores_import(
        study=study, file=csv_file("reply_id,metric,value\nc1-hred,usr,0.9\nc2-hred,usr,0.3\n")
    )
    assert [(metric.replies, metric.replaced) for metric in result.metrics] == [(2, 1)]
    assert values(study, "usr|origin:external") == {"c1-hred": 0.9, "c1-human": 0.2, "c2-hred": 0.3}
    assert MetricSignature.objects.count() == 1


def test_names_that_collide_with_a_metric_already_imported(study) -> None:
    external_scores_import(
        study=study, file=csv_file("reply_id,metric,value,signature\nc1-hred,usr,0.1,v1\n")
    )
    with pytest.raises(ImportRejected) as rejected:
        external_scores_import(
            study=study, file=csv_file("reply_id,metric,value\nc1-hred,USR,0.5\n", name="b.csv")
        )
    (problem,) = rejected.value.problems
    assert (problem.file, problem.line, problem.field) == ("b.csv", 2, "metric")
    assert '"USR" collides with the external metric "usr" already in the study' in problem.message
    # the same name with another signature is another metric version: kept beside the first, with a warning
    result = external_scores_import(
        study=study, file=csv_file("reply_id,metric,value,signature\nc1-hred,usr,0.7,v2\n")
    )
    assert result.warnings
    assert "usr|origin:external|sig:v1" in result.warnings[0]
    assert values(study, "usr|origin:external|sig:v1") == {"c1-hred": 0.1}
    assert values(study, "usr|origin:external|sig:v2") == {"c1-hred": 0.7}


def test_the_upload_limit_applies(study, settings) -> None:
    settings.DIALEVAL_MAX_UPLOAD_BYTES = 20
    with pytest.raises(ImportRejected) as rejected:
        external_scores_import(study=study, file=csv_file("reply_id,metric,value\nc1-hred,usr,0.1\n"))
    assert "the limit is 20" in str(rejected.value)
    assert not MetricScore.objects.exists()


def test_deleting_an_external_metric_removes_its_scores_and_then_its_signature(study, committed) -> None:
    external_scores_import(
        study=study, file=csv_file("reply_id,metric,value\nc1-hred,usr,0.1\nc2-hred,usr,0.2\n")
    )
    other = StudyFactory.create()
    context = DialogContextFactory.create(study=other, external_id="c1")
    ResponseFactory.create(
        context=context, system=SystemFactory.create(study=other, name="hred"), external_id="c1-hred"
    )
    external_scores_import(study=other, file=csv_file("reply_id,metric,value\nc1-hred,usr,0.5\n"))
    signature = MetricSignature.objects.get(text="usr|origin:external")
    builtin = MetricSignature.objects.create(text="bleu-2|refs:single|version:x", name="bleu-2", version="x")
    MetricScore.objects.create(response=reply(study, "c1-hred"), signature=builtin, value=0.3)
    version = Study.objects.get(pk=study.pk).data_version

    with pytest.raises(ExternalMetricNotFound):
        external_metric_delete(study=study, signature_id=builtin.pk)  # a built-in metric: never here
    with committed():
        assert external_metric_delete(study=study, signature_id=signature.pk) == 2
    assert Study.objects.get(pk=study.pk).data_version == version + 1
    assert values(study, signature.text) == {}
    assert values(other, signature.text) == {"c1-hred": 0.5}  # the other study keeps its own
    assert MetricScore.objects.filter(signature=builtin).count() == 1
    external_metric_delete(study=other, signature_id=signature.pk)
    assert not MetricSignature.objects.filter(pk=signature.pk).exists()  # no score left anywhere
    with pytest.raises(ExternalMetricNotFound):
        external_metric_delete(study=other, signature_id=signature.pk)


def test_the_command_imports_and_prints_what_it_did(study, tmp_path: Path) -> None:
    path = tmp_path / "judge.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"reply_id": rid, "metric": "judge", "value": v})
            for rid, v in [("c1-hred", 4), ("c2-hred", 2)]
        ),
        encoding="utf-8",
    )
    out = StringIO()
    call_command("import_metric_scores", "external study", str(path), stdout=out)
    assert "imported 2 score(s) of 1 metric(s) from judge.jsonl into 'external study'" in out.getvalue()
    assert "judge (external): 2 replies; signature judge|origin:external" in out.getvalue()
    assert values(study, "judge|origin:external") == {"c1-hred": 4.0, "c2-hred": 2.0}


def test_the_command_prints_every_problem_and_changes_nothing(study, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("reply_id,metric,value\nc1-hred,usr,high\nmissing,usr,1\n", encoding="utf-8")
    with pytest.raises(CommandError) as error:
        call_command("import_metric_scores", str(study.pk), str(path), stdout=StringIO())
    text = str(error.value)
    assert 'bad.csv, line 2, field "value": "high" is not a number' in text
    assert 'bad.csv, line 3, field "reply_id": no reply of this study has the id "missing"' in text
    assert not MetricScore.objects.exists()
    with pytest.raises(CommandError, match="no study with the name or id"):
        call_command("import_metric_scores", "no such study", str(path))
