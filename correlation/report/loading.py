"""Reads everything a study's correlation report is computed from, as :class:`ReportInputs`.

A fixed number of queries whatever the size of the study (responses, raters, ratings, imported means,
signatures, metric values), plus two optional parts whose values a scoring run computes and so cost more:

* per-reference scores of every multi-reference signature (scoring/reference_scores.py), for the
  number-of-references curve of Gupta et al. (2019) Figure 2, over the replies with a human score;
* per (system, context) diversity metrics, when annotators judged diversity (Gupta et al. (2019) section 5.2;
  scoring/diversity_scores.py).

The report writes no metric value: it asks scoring for a run that computes what is missing and waits for
it with its progress (scoring/services/report_scores.py), then reads the values.

Metric scores imported from elsewhere (``MetricSignature.origin`` external) are read like the
app's own and named ``<name> (external)`` in the group External, so that an imported "bleu-2" never reads
as the built-in one. An LLM judge's score (``llm-judge:<key>``) is a metric of the group LLM judge, read
from its signature without its definition or its model (the report needs neither); its mass on labels
(``llm-judge-mass:<key>``) is no metric: its values are read beside the judge's (stats/report/judges.py). A metric that a scoring run asked for but that has no value for any reply (a
referenced metric on a study without references, ...) is listed with the reason (``unvalued``).

:func:`report_cost` estimates both before anything is computed, so the caller can decide to compute in
the request or in a worker.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Count

from annotation.models import (
    Adjudication,
    Annotator,
    DialogContext,
    DiversityJudgment,
    ImportedMeanRating,
    Question,
    Rating,
    Reference,
    Response,
    Study,
)
from annotation.selectors.quality import RatingRow, agreements_from_rows, overall_agreement, study_rating_rows
from correlation.report.pairwise_loading import study_pairwise_judges, study_pairwise_records
from correlation.selectors import study_metric_signatures, study_metric_values
from scoring.diversity_scores import DIVERSITY_METRICS, diversity_read
from scoring.external.file_format import external_metric_label
from scoring.metrics.llm_judge.specs import NO_LABEL
from scoring.metrics.registry import UnknownMetricError, is_system_metric, metric_spec, undefined_reason
from scoring.metrics.signature import signature_implementation
from scoring.models import (
    MetricOrigin,
    MetricSignature,
    PerReferenceScore,
    RunPurpose,
    RunStatus,
    ScoringChunk,
    ScoringRun,
)
from scoring.reference_scores import per_reference_read, recomputable_reason
from scoring.services.report_scores import report_scores_compute
from stats.judge_names import is_judge, is_label_mass, judge_signature_of_mass, pairwise_judge_key
from stats.report.adjudication import Adjudications, adjudicated, adjudications_from_rows
from stats.report.code_version import code_version
from stats.report.human import human_scores
from stats.report.metric_names import signatures_display_names
from stats.report.types import (
    EXTERNAL_GROUP,
    JUDGE_GROUP,
    AnnotatorInfo,
    DiversityInputs,
    QuestionInputs,
    ReferenceScores,
    ReportInputs,
    ReportOptions,
    ResponseInfo,
    SignatureInputs,
    UnvaluedMetric,
)

Progress = Callable[[str, int, int], None]
INVERTED = ("self-bleu-2", "self-bleu-4")
SEVERAL_REFERENCES_NEEDED = (
    "references curve: needs contexts with ≥ 2 references (every context here has at most one, so the "
    "curve would be a single point at k = 1)"
)  # Gupta et al. (2019) footnote 2: correlated as 1 - Self-BLEU


@dataclass(frozen=True)
class ReportCost:
    """What computing a report will take: statistics cells and metric recomputations."""

    responses: int
    signatures: int
    ratings: int
    reference_pairs: int  # (reply, reference) pairs to recompute for the references curve
    diversity_pairs: int  # (system, context) pairs with diversity judgments

    @property
    def cells(self) -> int:
        return self.responses * (self.signatures + 1) + self.ratings


def report_cost(*, study: Study) -> ReportCost:
    responses = Response.objects.filter(context__study=study).count()
    signatures, _ = report_signatures(study_metric_signatures(study=study))
    multi = [
        signature
        for signature in signatures
        if signature.parameters.get("refs") == "multi"
        and not recomputable_reason(signature=signature, language=study.language)
    ]
    references = Reference.objects.filter(context__study=study).count()
    per_reply = references / max(1, study.contexts.count())
    if not _contexts_with_several_references(study):
        multi = []  # no curve to draw, nothing to recompute (_reference_scores)
    # Replies whose per-reference scores are kept already cost nothing (scoring.models.PerReferenceScore).
    kept = dict(
        PerReferenceScore.objects.filter(signature__in=multi, response__context__study=study)
        .values_list("signature_id")
        .annotate(count=Count("id"))
    )
    missing = sum(max(0, responses - kept.get(signature.pk, 0)) for signature in multi)
    return ReportCost(
        responses=responses,
        signatures=len(signatures),
        ratings=_rating_count(study),
        reference_pairs=int(missing * per_reply),
        diversity_pairs=DiversityJudgment.objects.filter(context__study=study)
        .values("context", "system")
        .distinct()
        .count(),
    )


def study_human_scores(*, study: Study, questions: list[Question]) -> dict[int, dict[int, float]]:
    """question id -> response id -> human score, as the report computes it with the study's own filter
    (stats/report/human.py): the mean of the ratings that count, an imported mean where none does.
    Ratings of annotators left out of reports are never deleted, only not counted."""
    inputs = report_inputs(study=study, recompute=False, metrics=False)
    by_name = {question.name: question for question in inputs.questions}
    return {
        question.pk: human_scores(
            by_name[question.name], inputs.annotators, ReportOptions(), inputs.study_threshold
        )
        for question in questions
        if question.study_id == study.pk
    }


def report_inputs(
    *,
    study: Study,
    question: Question | None = None,
    recompute: bool = True,
    metrics: bool = True,
    progress: Progress | None = None,
) -> ReportInputs:
    """The study's report inputs; ``question`` limits them to one question, ``recompute=False`` leaves out
    the parts that recompute metrics (the references curve, the diversity table), ``metrics=False`` the
    metric values."""
    questions = (
        [question]
        if question is not None
        else list(Question.objects.filter(study=study).order_by("position", "id"))
    )
    responses = _study_responses(study)
    decisions = study_adjudications(study=study)
    # Replies the researcher excluded are left out of everything, the raters' agreement included.
    rows = [row for row in study_rating_rows(study=study) if row.response_id not in decisions.excluded]
    annotators = _study_annotators(study, rows)
    means = _imported_means(questions)
    by_question = _ratings_by_question(rows, questions)
    signatures, masses = report_signatures(study_metric_signatures(study=study) if metrics else [])
    inputs_signatures = tuple(_signature_inputs(signature, masses) for signature in signatures)
    unvalued = (
        tuple(study_unvalued_metrics(study=study, signatures=signatures, masses=masses)) if metrics else ()
    )
    names = {text: name.text for text, name in signatures_display_names(inputs_signatures, unvalued).items()}
    reference_scores: list[ReferenceScores] = []
    notes: list[str] = []
    diversity = None
    if recompute:
        rated = sorted(
            {response_id for q in questions for response_id in _rated(by_question[q.pk], means[q.pk])}
            - decisions.excluded
        )
        curve, notes = _curve_signatures(study, signatures, rated, names)
        note = report_scores_compute(
            study=study, curve_signatures=curve, response_ids=rated, progress=progress
        )
        notes += [note] if note else []
        reference_scores = _reference_scores(study, curve, rated)
        diversity = _diversity_inputs(study)
    inputs = ReportInputs(
        study_id=study.pk,
        study_name=study.name,
        data_version=study.data_version,
        study_threshold=study.kappa_threshold,
        responses=responses,
        annotators=annotators,
        questions=tuple(
            QuestionInputs(
                name=q.name,
                scale_min=q.scale_min,
                scale_max=q.scale_max,
                ratings=tuple(by_question[q.pk]),
                imported_means=means[q.pk],
            )
            for q in questions
        ),
        signatures=inputs_signatures,
        metric_values=study_metric_values(study=study) if metrics else {},
        reference_scores=tuple(reference_scores),
        reference_notes=tuple(notes),
        diversity=diversity,
        code_version=code_version(),
        pairwise=study_pairwise_records(study=study),  # correlation/report/pairwise_loading.py
        unvalued=unvalued,
        pairwise_judges=study_pairwise_judges(study=study) if metrics else (),
    )
    return adjudicated(inputs, decisions)


def _study_responses(study: Study) -> dict[int, ResponseInfo]:
    return {
        response_id: ResponseInfo(text=text, system=system, context=context, context_id=context_id)
        for response_id, text, system, context, context_id in Response.objects.filter(
            context__study=study
        ).values_list("id", "text", "system__name", "context__external_id", "context_id")
    }


def _study_annotators(study: Study, rows: list[RatingRow]) -> dict[int, AnnotatorInfo]:
    """Each rater, with their agreement with the others on the ratings kept (``rows``)."""
    agreements = agreements_from_rows(rows)
    return {
        key: AnnotatorInfo(
            key=key,
            pseudonym=pseudonym,
            identity_known=identity_known,
            inclusion=inclusion,
            agreement=overall_agreement(agreements.get(key, {}).values()),
        )
        for key, pseudonym, identity_known, inclusion in Annotator.objects.filter(study=study).values_list(
            "id", "pseudonym", "identity_known", "report_inclusion"
        )
    }


def _imported_means(questions: list[Question]) -> dict[int, dict[int, float]]:
    """Question -> reply -> its imported mean score (finite values only)."""
    means: dict[int, dict[int, float]] = {q.pk: {} for q in questions}
    for question_id, response_id, value in ImportedMeanRating.objects.filter(
        question__in=questions
    ).values_list("question_id", "response_id", "value"):
        if math.isfinite(value):
            means[question_id][response_id] = float(value)
    return means


def _ratings_by_question(
    rows: list[RatingRow], questions: list[Question]
) -> dict[int, list[tuple[int, int, int]]]:
    """Question -> (rater, reply, value) of every rating on the question's scale."""
    by_question: dict[int, list[tuple[int, int, int]]] = {q.pk: [] for q in questions}
    for row in rows:
        if row.question_id in by_question and row.scale_min <= row.value <= row.scale_max:
            by_question[row.question_id].append((row.annotator_id, row.response_id, row.value))
    return by_question


def study_adjudications(*, study: Study) -> Adjudications:
    """The researcher's decisions on the study's replies (annotation.models.Adjudication), one query."""
    rows = Adjudication.objects.filter(response__context__study=study).values_list(
        "response_id", "excluded", "gold"
    )
    return adjudications_from_rows(list(rows))


def report_signatures(signatures: list[MetricSignature]) -> tuple[list[MetricSignature], dict[str, int]]:
    """The signatures that are metrics of the report, and each LLM judge's signature text -> the id of its
    mass on labels (``llm-judge-mass:<key>``, same parameters): a companion kept beside it, not a metric."""
    masses: dict[str, int] = {}
    metrics = []
    for signature in signatures:
        judge = judge_signature_of_mass(signature.text)
        if judge is not None:
            masses[judge] = signature.pk
        elif not is_label_mass(signature.name):
            metrics.append(signature)
    return metrics, masses


def signature_group(name: str, parameters: dict[str, str]) -> tuple[str, str]:
    """(row block, references mode) of a signature: blends of a referenced and an unreferenced score are
    Hybrid (RUBER's "Ruber" block in Tao et al. (2018) Table 2); LLM judges are LLM judge, read from the name
    (resolving a judge's spec builds its backend); metrics this app does not know are Other."""
    if is_judge(name):
        return JUDGE_GROUP, "none"
    try:
        spec = metric_spec(name)
    except UnknownMetricError:
        return "Other", str(parameters.get("refs", "none"))
    if spec.requires:
        return "Hybrid", str(parameters.get("refs", "none"))
    if spec.needs_references:
        return "Referenced", str(parameters.get("refs", "single"))
    return "Unreferenced", "none"


def _signature_inputs(signature: MetricSignature, masses: Mapping[str, int]) -> SignatureInputs:
    parameters = {str(key): str(value) for key, value in (signature.parameters or {}).items()}
    if signature.origin == MetricOrigin.EXTERNAL:  # computed elsewhere: whatever its name, not ours
        name, group, references = external_metric_label(signature.name), EXTERNAL_GROUP, "none"
    else:
        name = signature.name
        group, references = signature_group(signature.name, parameters)
    return SignatureInputs(
        id=signature.pk,
        name=name,
        text=signature.text,
        references=references,
        group=group,
        parameters=parameters,
        origin=str(signature.origin),
        implementation=signature_implementation(parameters, str(signature.origin)),
        label_mass_id=masses.get(signature.text),
    )


_RUNS_LOOKED_AT = 50  # the newest finished runs say which metrics were asked for and why they have none


def study_unvalued_metrics(
    *, study: Study, signatures: list[MetricSignature], masses: Mapping[str, int] | None = None
) -> list[UnvaluedMetric]:
    """The per-reply metrics that the study's newest finished runs asked for and that have no value for
    any reply of the study, under any signature (``signatures``: those with values), each with why, from
    the newest run that asked for it; never a judge's mass on labels (``masses``: judge signature text -> its
    mass's id, report_signatures). Three queries, and two more when there are some."""
    valued = {signature.name for signature in signatures if signature.origin != MetricOrigin.EXTERNAL}
    runs: list[Mapping[str, Any]] = list(
        ScoringRun.objects.filter(
            study=study, purpose=RunPurpose.SCORES, status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED]
        )
        .order_by("-created_at", "-id")
        .values("pk", "status", "signatures", "error", "failures")[:_RUNS_LOOKED_AT]
    )
    asked: dict[str, tuple[Mapping[str, Any], int]] = {}  # metric -> (newest run asking, signature id)
    for run in runs:
        for name, signature_id in (run["signatures"] or {}).items():
            per_reply = not is_system_metric(name) and pairwise_judge_key(name) is None  # a judge's: per pair
            if name not in valued and name not in asked and per_reply and not is_label_mass(name):
                asked[name] = (run, int(signature_id))
    if not asked:
        return []
    rows = MetricSignature.objects.in_bulk([signature_id for _, signature_id in asked.values()])
    undefined: dict[tuple[int, str], int] = {}
    for run_id, counts in ScoringChunk.objects.filter(
        run_id__in={asking["pk"] for asking, _ in asked.values()}
    ).values_list("run_id", "undefined"):
        for name, count in (counts or {}).items():
            undefined[(run_id, name)] = undefined.get((run_id, name), 0) + int(count)
    has_references = Reference.objects.filter(context__study=study).exists()
    result = []
    for name, (asking, signature_id) in asked.items():
        row = rows.get(signature_id)
        if row is None:  # deleted since
            continue
        parameters = {str(key): str(value) for key, value in (row.parameters or {}).items()}
        group, references = signature_group(name, parameters)
        result.append(
            UnvaluedMetric(
                name=name,
                text=row.text,
                references=references,
                group=group,
                reason=_no_values_reason(name, asking, undefined, has_references=has_references),
                origin=str(row.origin),
                implementation=signature_implementation(parameters, str(row.origin)),
                label_mass_id=(masses or {}).get(row.text),
            )
        )
    return sorted(result, key=lambda metric: (metric.name, metric.text))


def _no_values_reason(
    name: str, run: Mapping[str, Any], undefined: dict[tuple[int, str], int], *, has_references: bool
) -> str:
    run_id = int(run["pk"])
    try:  # a judge reads no reference, and resolving its spec would build its backend
        needs_references = not is_judge(name) and metric_spec(name).needs_references
    except UnknownMetricError:
        needs_references = False
    if needs_references and not has_references:
        return "it needs references and the study has none"
    count = undefined.get((run_id, name), 0)
    if count:
        return (
            f"it has no value for any of the {count} replies it was computed on (run {run_id}): "
            f"{NO_LABEL if is_judge(name) else undefined_reason(name)}"
        )
    failures = [
        failure for failure in run["failures"] or [] if name in str(failure.get("metric", "")).split(", ")
    ]
    if failures:
        return f"it could not be computed on {len(failures)} replies (run {run_id}): {failures[0].get('error', '')}"
    if run["status"] == RunStatus.FAILED:
        error = str(run["error"] or "").strip().splitlines()
        return f"run {run_id} failed" + (f": {error[0]}" if error else "")
    return f"run {run_id} stored no value of it"


def _rated(ratings: list[tuple[int, int, int]], means: dict[int, float]) -> set[int]:
    return {response_id for _, response_id, _ in ratings} | set(means)


def _rating_count(study: Study) -> int:
    return Rating.objects.filter(question__study=study).count()


def _curve_signatures(
    study: Study, signatures: list[MetricSignature], rated: list[int], names: Mapping[str, str]
) -> tuple[list[MetricSignature], list[str]]:
    """The multi-reference signatures the references curve recomputes per reference, and a note for each
    that it cannot (or one saying no context has a second reference: then there is no curve), naming each
    metric by its display name (``names``: signature text -> display name, the report's)."""
    multi = [signature for signature in signatures if signature.parameters.get("refs") == "multi"]
    if multi and not _contexts_with_several_references(study, rated):
        # k = 1 is the only point such a curve has, and recomputing it loads every model of the
        # multi-reference metrics (MiniLM, WordNet, word vectors): most of a small study's first report.
        return [], [SEVERAL_REFERENCES_NEEDED]
    curve: list[MetricSignature] = []
    notes: list[str] = []
    for signature in multi:
        reason = recomputable_reason(
            signature=signature, language=study.language, name=names.get(signature.text, "")
        )
        if reason:
            notes.append(f"references curve: {reason}")
        else:
            curve.append(signature)
    return curve, notes


def _reference_scores(study: Study, curve: list[MetricSignature], rated: list[int]) -> list[ReferenceScores]:
    """The kept per-reference scores of the curve's signatures (a scoring run computed them)."""
    result = []
    for signature in curve:
        scores = per_reference_read(study=study, signature=signature, response_ids=rated)
        result.append(ReferenceScores(signature_id=signature.pk, scores=scores.scores, width=scores.width))
    return result


def _contexts_with_several_references(study: Study, response_ids: list[int] | None = None) -> bool:
    """Whether a context of the study (of these replies) has 2 references or more: the references curve
    has a second point only then."""
    contexts = DialogContext.objects.filter(study=study)
    if response_ids is not None:
        contexts = contexts.filter(responses__in=response_ids)
    counted = contexts.annotate(references_count=Count("references", distinct=True))
    return counted.filter(references_count__gte=2).exists()


def _diversity_inputs(study: Study) -> DiversityInputs | None:
    """The raters' diversity judgments per (system, context) with the kept diversity metrics of each pair
    (a scoring run computed them)."""
    judgments = list(
        DiversityJudgment.objects.filter(context__study=study).values_list(
            "system_id", "system__name", "context_id", "context__external_id", "meanings"
        )
    )
    if not judgments:
        return None
    human: dict[tuple[str, str], list[float]] = {}
    names: dict[tuple[int, int], tuple[str, str]] = {}
    for system_id, system, context_id, external_id, meanings in judgments:
        key = (system, external_id or str(context_id))
        human.setdefault(key, []).append(float(meanings))
        names[(system_id, context_id)] = key
    stored = diversity_read(study=study)
    metrics = {
        name: {names[pair]: value for pair, value in stored.get(name, {}).items() if pair in names}
        for name in DIVERSITY_METRICS
    }
    return DiversityInputs(
        human={key: tuple(values) for key, values in human.items()}, metrics=metrics, inverted=INVERTED
    )
