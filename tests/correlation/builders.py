"""Small builders for correlation tests: responses with ratings, imported means and metric scores.

Rows are real database rows made through tests/factories.py plus MetricSignature/MetricScore objects,
the way the scoring workers and importers will leave them. Like every service that writes report data,
:func:`add_items` bumps the study's data version (at once: a test's transaction never commits, so the
services' after-commit bump would not run), so that cached reports see the new rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.db.models import F

from annotation.models import (
    Annotator,
    DialogContext,
    ImportedMeanRating,
    Question,
    Rating,
    Response,
    Study,
    System,
)
from scoring.models import MetricScore, MetricSignature
from tests.factories import DialogContextFactory, ResponseFactory


@dataclass(frozen=True)
class Item:
    """One response: its system, the ratings of annotators 0..k-1, an imported mean, metric values."""

    system: str
    ratings: Sequence[int] = ()
    imported: float | None = None
    scores: Mapping[str, float] = field(default_factory=dict)  # signature text -> value
    text: str = "i am fine , thank you ."
    context: str | None = None  # items naming the same context share it; None: a context of its own


def signature(name: str = "bleu-2", refs: str = "single", extra: str = "") -> MetricSignature:
    return MetricSignature.objects.create(
        text=f"{name}|refs:{refs}|tok:13a{extra}|version:test",
        name=name,
        parameters={"refs": refs},
        version="test",
    )


def add_items(*, study: Study, question: Question, items: Sequence[Item]) -> list[Response]:
    signatures = {s.text: s for s in MetricSignature.objects.all()}
    responses = []
    contexts: dict[str, DialogContext] = {}
    for item in items:
        system, _ = System.objects.get_or_create(study=study, name=item.system)
        if item.context is None:
            context = DialogContextFactory.create(study=study)
        else:
            if item.context not in contexts:
                contexts[item.context] = DialogContextFactory.create(study=study)
            context = contexts[item.context]
        response = ResponseFactory.create(context=context, system=system, text=item.text)
        for index, rating in enumerate(item.ratings):
            annotator, _ = Annotator.objects.get_or_create(study=study, pseudonym=f"rater-{index}")
            Rating.objects.create(annotator=annotator, response=response, question=question, value=rating)
        if item.imported is not None:
            ImportedMeanRating.objects.create(
                response=response, question=question, value=item.imported, raters=3
            )
        for text, value in item.scores.items():
            MetricScore.objects.create(response=response, signature=signatures[text], value=value)
        responses.append(response)
    bump_data_version(study)
    return responses


def bump_data_version(study: Study) -> None:
    Study.objects.filter(pk=study.pk).update(data_version=F("data_version") + 1)


def scored_demo_study(owner, runs: Sequence[tuple[Sequence[str], str, str]], capture) -> Study:
    """The project's own demo sample (annotation/demo_sample.py) as a study of ``owner``, scored in process by
    each run of ``runs`` ((metrics, references, implementation)); ``capture``: pytest-django's
    ``django_capture_on_commit_callbacks``, so that what the import and the runs queue after committing runs."""
    from annotation.demo_sample import demo_sample_jsonl
    from annotation.importers import ImportFile
    from annotation.services.imports import study_import
    from annotation.services.studies import study_create
    from scoring.services import scoring_run_create, scoring_run_execute

    study = study_create(owner=owner, name="Demo: sample dialogs", scale="0-2")
    with capture(execute=True):
        study_import(
            study=study,
            format="jsonl",
            files=[ImportFile(name="demo-sample.jsonl", data=demo_sample_jsonl())],
        )
        for metrics, references, implementation in runs:
            run = scoring_run_create(
                study=study, metrics=list(metrics), references=references, implementation=implementation,
                enqueue=False,
            )  # fmt: skip
            run = scoring_run_execute(run_id=run.pk)
            assert run.status == "succeeded", run.error
    study.refresh_from_db()
    return study
