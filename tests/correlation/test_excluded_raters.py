"""Reports leave out the ratings of excluded annotators (Gupta et al. (2019) section 5.1.1 drops raters with kappa
under 0.2), and take them back when the annotator is included again: nothing is deleted."""

from __future__ import annotations

import pytest

from correlation.report.loading import study_human_scores
from tests.annotation.quality_builders import contrarian, rated_study, truth

pytestmark = pytest.mark.django_db


def test_an_excluded_annotators_ratings_do_not_move_the_human_score() -> None:
    study, question, responses, annotators = rated_study(agreeing=5, extra={"contrary": contrarian})
    first = responses[0]  # careful raters say 0, the contrarian 2

    scores = study_human_scores(study=study, questions=[question])[question.pk]
    assert scores[first.pk] == pytest.approx(truth(0))  # the contrarian is under 0.2: left out
    assert all(scores[response.pk] == truth(index) for index, response in enumerate(responses))

    study.kappa_threshold = None  # keep everyone
    study.save()
    scores = study_human_scores(study=study, questions=[question])[question.pk]
    assert scores[first.pk] == pytest.approx(2 / 6)  # five zeros and a two

    study.kappa_threshold = 0.2
    study.save()
    contrary = annotators["contrary"]
    contrary.report_inclusion = "include"  # the researcher's override
    contrary.save()
    scores = study_human_scores(study=study, questions=[question])[question.pk]
    assert scores[first.pk] == pytest.approx(2 / 6)

    careful = annotators["good-0"]
    careful.report_inclusion = "exclude"
    careful.save()
    scores = study_human_scores(study=study, questions=[question])[question.pk]
    assert scores[first.pk] == pytest.approx(2 / 5)  # four zeros and the contrarian's two
