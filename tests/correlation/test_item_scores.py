"""The per-response scores CSV: every response, its human score per question and every metric score."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from annotation.models import ImportedMeanRating
from scoring.models import MetricScore, MetricSignature
from tests.factories import (
    QuestionFactory,
    RatingFactory,
    ResearcherFactory,
    ResponseFactory,
    StudyFactory,
)

pytestmark = pytest.mark.django_db


def test_scores_csv_has_one_row_per_response_with_human_and_metric_columns() -> None:
    owner = ResearcherFactory.create()
    study = StudyFactory.create(owner=owner)
    appropriateness = QuestionFactory.create(study=study, name="appropriateness")
    fluency = QuestionFactory.create(study=study, name="fluency", scale_min=1, scale_max=5, position=1)
    rated = ResponseFactory.create(context__study=study, text='a "quoted", reply')
    meaned = ResponseFactory.create(context__study=study, system=rated.system)
    unscored = ResponseFactory.create(context__study=study, system=rated.system)
    for value in (0, 2):
        RatingFactory.create(response=rated, question=appropriateness, value=value)
    ImportedMeanRating.objects.create(response=meaned, question=fluency, value=4.5)
    signature = MetricSignature.objects.create(text="bleu-2|refs:multi", name="bleu-2", version="t")
    MetricScore.objects.create(response=rated, signature=signature, value=0.25)
    MetricScore.objects.create(response=meaned, signature=signature, value=0.5)

    client = Client()
    client.force_login(owner)
    response = client.get(f"/reports/{study.pk}/scores.csv")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="study-{study.pk}-scores.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_id = {int(row["response_id"]): row for row in rows}
    assert set(by_id) == {rated.pk, meaned.pk, unscored.pk}
    assert list(rows[0]) == [
        "response_id", "context_id", "system", "response", "human:appropriateness", "human:fluency",
        "bleu-2|refs:multi",
    ]  # fmt: skip
    assert by_id[rated.pk]["response"] == 'a "quoted", reply'
    assert float(by_id[rated.pk]["human:appropriateness"]) == pytest.approx(1.0)
    assert by_id[rated.pk]["human:fluency"] == ""
    assert float(by_id[meaned.pk]["human:fluency"]) == pytest.approx(4.5)
    assert float(by_id[meaned.pk]["bleu-2|refs:multi"]) == pytest.approx(0.5)
    assert by_id[unscored.pk]["bleu-2|refs:multi"] == ""
    assert by_id[rated.pk]["context_id"] == rated.context.external_id


def test_scores_csv_is_only_for_the_owner() -> None:
    study = StudyFactory.create()
    client = Client()
    client.force_login(ResearcherFactory.create())
    assert client.get(f"/reports/{study.pk}/scores.csv").status_code == 404
