"""Studies for the benchmark tests: contexts answered by every system, rated by three raters, scored by the
metrics given (signature text -> function of the reply's hidden quality and index)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from annotation.models import Annotator, Question, Rating, Study, System
from scoring.models import MetricScore, MetricSignature
from tests.correlation.builders import bump_data_version
from tests.factories import DialogContextFactory, QuestionFactory, ResponseFactory, StudyFactory

Metric = Callable[[float, int], float]
BLEU, METEOR, FLAT = "bleu-2|refs:single|version:test", "meteor|version:test", "flat|version:test"


def bleu_like(quality: float, index: int) -> float:
    """Follows the hidden quality, with a deterministic wobble."""
    return quality + ((index * 37) % 11) / 4


def meteor_like(quality: float, index: int) -> float:
    """Mostly noise, a little quality."""
    return ((index * 53) % 17) / 17 + quality / 10


def two_studies(owner) -> list[Study]:
    """ "GRADE convai2" scored by BLEU and METEOR, "own pilot" by BLEU and a constant metric."""
    first = benchmark_study(owner, "GRADE convai2", {BLEU: bleu_like, METEOR: meteor_like}, seed=1)
    second = benchmark_study(owner, "own pilot", {BLEU: bleu_like, FLAT: lambda q, i: 0.5}, seed=2)
    return [first, second]


def benchmark_study(
    owner, name: str, metrics: Mapping[str, Metric], *, seed: int, contexts: int = 8, systems: int = 3
) -> Study:
    """Every rater counts (no agreement threshold), so a reply's human score is the mean of its ratings."""
    rng = np.random.default_rng(seed)
    study = StudyFactory.create(owner=owner, name=name, kappa_threshold=None)
    question: Question = QuestionFactory.create(study=study, name="quality", scale_min=1, scale_max=5)
    raters = [Annotator.objects.create(study=study, pseudonym=f"rater-{k}") for k in range(3)]
    names = [System.objects.create(study=study, name=f"bot-{s}") for s in range(systems)]
    signatures = {
        text: MetricSignature.objects.get_or_create(
            text=text, defaults={"name": text.split("|")[0], "parameters": {}, "version": "test"}
        )[0]
        for text in metrics
    }
    index = 0
    for _ in range(contexts):
        context = DialogContextFactory.create(study=study)
        for system in names:
            quality = float(rng.normal() + 0.5 * system.pk % 3)
            response = ResponseFactory.create(context=context, system=system, text=f"reply {index}")
            for rater in raters:
                value = int(np.clip(round(3 + quality + rng.normal(scale=0.7)), 1, 5))
                Rating.objects.create(annotator=rater, response=response, question=question, value=value)
            for text, metric in metrics.items():
                MetricScore.objects.create(
                    response=response, signature=signatures[text], value=metric(quality, index)
                )
            index += 1
    bump_data_version(study)
    return study
