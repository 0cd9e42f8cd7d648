"""The report parts that recompute metrics: the number-of-references curve (Gupta et al. (2019) Figure 2) from the real
metric core, and the diversity table (Gupta et al. (2019) Table 5) from annotators' diversity judgments."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from annotation.models import Annotator, DiversityJudgment, Rating, Reference, Response, System
from correlation.report.loading import report_cost, report_inputs
from scoring.metrics.registry import compute_metrics, compute_system_metric
from scoring.metrics.system_specs import ContextOutputs
from scoring.models import MetricScore, PerReferenceScore
from scoring.services import scoring_run_create, scoring_run_execute
from stats.report.builder import build_report
from stats.report.types import ReportOptions
from tests.factories import DialogContextFactory, QuestionFactory, StudyFactory

pytestmark = pytest.mark.django_db

WORDS = ["the", "a", "cat", "dog", "sat", "ran", "on", "in", "mat", "park", "big", "small", "red", "blue"]


def _sentence(rng: np.random.Generator, length: int = 6) -> str:
    return " ".join(rng.choice(WORDS, size=length))


@pytest.fixture
def multi_reference_study():
    rng = np.random.default_rng(11)
    study = StudyFactory.create()
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=1, scale_max=5)
    rater = Annotator.objects.create(study=study, pseudonym="rater")
    system = System.objects.create(study=study, name="s")
    for index in range(30):
        context = DialogContextFactory.create(study=study)
        references = [_sentence(rng) for _ in range(3 + index % 2)]  # 3 or 4 references
        for position, text in enumerate(references):
            Reference.objects.create(
                context=context, text=text, origin="original" if position == 0 else "collected"
            )
        reply = references[int(rng.integers(0, len(references)))] if index % 3 else _sentence(rng)
        response = Response.objects.create(context=context, system=system, text=reply)
        Rating.objects.create(
            annotator=rater, response=response, question=question, value=int(rng.integers(1, 6))
        )
    run = scoring_run_create(study=study, metrics=["bleu-2"], references="multi", enqueue=False)
    assert scoring_run_execute(run_id=run.pk).status == "succeeded"
    study.refresh_from_db()
    return study


def test_the_curve_recomputes_each_reference_and_ends_at_the_stored_multi_reference_score(
    multi_reference_study,
) -> None:
    study = multi_reference_study
    inputs = report_inputs(study=study)
    [scores] = inputs.reference_scores
    assert scores.width == 4
    for response in Response.objects.filter(context__study=study).select_related("context"):
        references = list(response.context.references.order_by("id").values_list("text", flat=True))
        expected = compute_metrics(
            ["bleu-2"],
            [response.text] * len(references),
            [[r] for r in references],
            [""] * len(references),
            "en",
        )["bleu-2"]
        assert scores.scores[response.pk] == pytest.approx(expected)
        stored = MetricScore.objects.get(response=response).value
        assert max(scores.scores[response.pk]) == pytest.approx(
            stored
        )  # Gupta et al. (2019) eq. 1: the best match

    document, _ = build_report(inputs, ReportOptions(resamples=0))
    [curve] = document["references_curve"]
    assert [point["references"] for point in curve["points"]] == [1, 2, 3, 4]
    assert curve["points"][-1]["pearson_mean"] == pytest.approx(curve["stored_multi_pearson"])
    assert curve["points"][-1]["pearson_sd"] == pytest.approx(0.0, abs=1e-12)
    assert curve["points"][3]["items"] == 15  # only the contexts with four references have a fourth


def test_a_signature_that_cannot_be_recomputed_is_named_with_its_reason(multi_reference_study) -> None:
    study = multi_reference_study
    from scoring.models import MetricSignature

    signature = MetricSignature.objects.get(name="bleu-2")
    signature.parameters = {**signature.parameters, "version": "0.0.1-old"}
    signature.save()
    inputs = report_inputs(study=study)
    assert inputs.reference_scores == ()
    assert any("has changed since these scores" in note for note in inputs.reference_notes)


def test_the_diversity_table_correlates_each_metric_per_system_and_context(researcher) -> None:
    rng = np.random.default_rng(3)
    study = StudyFactory.create(owner=researcher)
    QuestionFactory.create(study=study)
    raters = [Annotator.objects.create(study=study, pseudonym=f"r{k}") for k in range(2)]
    systems = [System.objects.create(study=study, name=name) for name in ("varied", "dull")]
    human, outputs_by_pair, references_by_pair = {}, {}, {}
    for index in range(12):
        context = DialogContextFactory.create(study=study, external_id=f"c{index}")
        references = [_sentence(rng) for _ in range(2)]
        for text in references:
            Reference.objects.create(context=context, text=text, origin="collected")
        for system in systems:
            outputs = (
                [_sentence(rng, 5 + k) for k in range(3)]
                if system.name == "varied"
                else ["the cat sat"] * 2 + [_sentence(rng)]
            )
            responses = [
                Response.objects.create(context=context, system=system, text=text, sample_index=k)
                for k, text in enumerate(outputs)
            ]
            meanings = []
            for rater in raters:
                judgment = DiversityJudgment.objects.create(
                    annotator=rater, context=context, system=system, meanings=int(rng.integers(1, 4))
                )
                judgment.appropriate.set(responses[:2])
                meanings.append(judgment.meanings)
            human[(system.name, context.external_id)] = float(np.mean(meanings))
            outputs_by_pair[(system.name, context.external_id)] = outputs
            references_by_pair[(system.name, context.external_id)] = references

    document, _ = build_report(report_inputs(study=study), ReportOptions(resamples=0))
    table = document["diversity"]
    assert table is not None
    assert table["pairs"] == 24
    assert table["judgments"] == 48
    rows = {row["metric"]: row for row in table["rows"]}
    keys = sorted(human)
    for name, inverted in (("distinct-2", False), ("self-bleu-2", True)):
        values = [
            compute_system_metric(
                name, [ContextOutputs(outputs_by_pair[k], references_by_pair[k])], "en"
            ).value
            for k in keys
        ]
        assert all(value is not None for value in values)
        x = [human[k] for k in keys]
        y = [1.0 - float(v or 0.0) if inverted else float(v or 0.0) for v in values]
        assert rows[name]["inverted"] is inverted
        assert rows[name]["n"] == 24
        assert rows[name]["spearman"] == pytest.approx(scipy_stats.spearmanr(x, y).statistic)
        assert rows[name]["pearson_p"] == pytest.approx(scipy_stats.pearsonr(x, y).pvalue)


def test_per_reference_scores_are_kept_and_only_changed_references_recompute(multi_reference_study) -> None:
    from scoring.models import MetricSignature, PerReferenceScore
    from scoring.reference_scores import per_reference_read
    from scoring.services.report_scores import report_scores_request

    study = multi_reference_study
    signature = MetricSignature.objects.get(name="bleu-2")
    rated = list(Response.objects.filter(context__study=study).values_list("pk", flat=True))

    def computed_now() -> list[int]:
        """The replies a report's run recomputes now (none: no run)."""
        run = report_scores_request(study=study, curve_signatures=[signature], response_ids=rated)
        if run is None:
            return []
        assert scoring_run_execute(run_id=run.pk).status == "succeeded", run.error
        return sorted(r for chunk in run.chunks.all() for r in chunk.response_ids)

    assert computed_now() == sorted(rated)
    assert PerReferenceScore.objects.filter(signature=signature).count() == 30
    first = per_reference_read(study=study, signature=signature, response_ids=rated)

    assert computed_now() == []  # a new rating changes no reference: nothing is recomputed
    again = per_reference_read(study=study, signature=signature, response_ids=rated)
    assert again.scores.keys() == first.scores.keys()
    for response_id, values in first.scores.items():
        assert again.scores[response_id] == pytest.approx(values, nan_ok=True)

    changed = Response.objects.filter(context__study=study).select_related("context").first()
    assert changed is not None
    Reference.objects.create(
        context=changed.context, text=changed.text, origin="collected"
    )  # a perfect match
    assert changed.pk not in per_reference_read(study=study, signature=signature, response_ids=rated).scores
    assert computed_now() == [changed.pk]  # only that context's reply
    after = per_reference_read(study=study, signature=signature, response_ids=rated)
    assert after.scores[changed.pk][-1] == pytest.approx(1.0)


def test_with_one_reference_per_context_nothing_is_recomputed_and_the_curve_says_why(
    multi_reference_study,
) -> None:
    """A curve of contexts with one reference is a single point at k = 1; recomputing it loaded every model
    of the multi-reference metrics on the first report of a small study (18 s, MiniLM and WordNet)."""
    study = multi_reference_study
    for context in study.contexts.all():
        context.references.exclude(pk=context.references.order_by("id").first().pk).delete()
    inputs = report_inputs(study=study)
    assert inputs.reference_scores == ()
    assert not PerReferenceScore.objects.filter(response__context__study=study).exists()
    assert report_cost(study=study).reference_pairs == 0
    document, _ = build_report(inputs, ReportOptions(resamples=0))
    assert document["references_curve"] == []
    assert any("needs contexts with ≥ 2 references" in note for note in document["notes"])
