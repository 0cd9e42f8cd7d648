"""The annotation page says how many more ratings the study needs: the sentences of stats/meta's estimate on
the study's own ratings (read here straight from the database), each system beside the next in the order of
their means, and what it says before any reply has two ratings."""

from __future__ import annotations

import html
import itertools

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Rating, Response
from scoring.models import MetricScore
from stats.meta import StudyRatings, rating_plan
from tests.correlation.benchmark.builders import benchmark_study
from tests.factories import QuestionFactory

pytestmark = pytest.mark.django_db

BLEU, METEOR = "bleu-2|refs:single|version:test", "meteor|version:test"


def _page(study) -> str:
    client = Client()
    client.force_login(study.owner)
    response = client.get(reverse("annotation:study-annotation", args=[study.pk]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def _expected(study):
    """rating_plan on the database's ratings, systems in the order of their mean rating, the two metrics."""
    ratings = list(Rating.objects.filter(response__context__study=study).values_list("response_id", "value"))
    replies = sorted({reply for reply, _ in ratings})
    responses = Response.objects.in_bulk(replies)
    systems = [responses[reply].system.name for reply in replies]
    contexts = [responses[reply].context_id for reply in replies]
    means = {reply: np.mean([v for r, v in ratings if r == reply]) for reply in replies}
    by_system = {
        name: np.mean([means[r] for r, s in zip(replies, systems, strict=True) if s == name])
        for name in set(systems)
    }
    order = sorted(by_system, key=lambda name: (-by_system[name], name))
    metrics = {
        text.split("|")[0]: np.array(
            [MetricScore.objects.get(response_id=reply, signature__text=text).value for reply in replies]
        )
        for text in (BLEU, METEOR)
    }
    study_ratings = StudyRatings(
        [r for r, _ in ratings], [float(v) for _, v in ratings], replies, systems, contexts, metrics
    )
    return rating_plan(
        study_ratings,
        system_pairs=list(itertools.pairwise(order)),
        metric_pairs=[("bleu-2", "meteor")],
    )


def test_the_annotation_page_says_how_many_more_ratings_each_interval_needs(researcher) -> None:
    study = benchmark_study(
        researcher,
        "pilot",
        {BLEU: lambda q, i: q + (i * 37 % 11) / 4, METEOR: lambda q, i: (i * 53 % 17) / 17 + q / 10},
        seed=4,
        contexts=10,
    )
    page = _page(study)

    assert "How many more ratings?" in page
    plan = _expected(study)
    assert len(plan.projections) == 3 + 2 + 2 + 1  # 3 means, 2 neighbours, 2 correlations, 1 pair of metrics
    for projection in plan.projections:
        assert projection.sentence[1:] in page
    assert f"From {plan.components.ratings} ratings of {plan.components.items} replies" in page


def test_before_any_reply_has_two_ratings_the_page_says_the_estimate_waits(researcher) -> None:
    study = benchmark_study(researcher, "new", {BLEU: lambda q, i: q}, seed=5, contexts=3)
    QuestionFactory.create(study=study, name="fluency", position=1)
    for response in Response.objects.filter(context__study=study):
        Rating.objects.filter(response=response).exclude(
            pk=Rating.objects.filter(response=response).order_by("pk").values("pk")[:1]
        ).delete()
    page = _page(study)

    assert "Not computable: no reply has two ratings yet, so rater noise is unknown." in page
    assert "No ratings yet." in page
