"""The metric-vs-human correlation report of a study, as the page, the API and ``study_report`` show it.

Utterance level (RUBER, seed 000 section 4.2 and Table 2; seed 003 section 5.1.2 and Table 4): for each
question and metric signature, Pearson and Spearman over the responses that have both a human score and
a metric value. System level (seed 003 section 5.1.2, Figure 1): the mean human score and mean metric
value of each system over those same responses, correlated across systems.

Nothing is written: the report is computed from the selectors' rows on each request, which stays cheap
at the sizes of these studies (hundreds to a few thousand responses).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from statistics import fmean
from typing import Any

from annotation.models import Question, Study
from correlation.selectors import (
    ResponseLabel,
    study_human_scores,
    study_metric_signatures,
    study_metric_values,
    study_questions,
    study_response_labels,
)
from correlation.stats import TOO_FEW_ITEMS, CorrelationResult, pearson_with_ci, spearman_with_ci
from scoring.models import MetricSignature

FEWER_THAN_THREE_SYSTEMS = "fewer than 3 systems"


@dataclass(frozen=True)
class QuestionSummary:
    id: int
    name: str
    scale_min: int
    scale_max: int
    human_scored: int  # responses with a human score for this question


@dataclass(frozen=True)
class UtteranceRow:
    question: str
    signature_id: int
    signature: str
    metric: str
    references: str
    pearson: CorrelationResult
    spearman: CorrelationResult

    @property
    def n(self) -> int:
        return self.pearson.n

    @property
    def note(self) -> str:
        return _joined_notes(self.pearson, self.spearman)


@dataclass(frozen=True)
class SystemMeans:
    system: str
    human_mean: float
    metric_mean: float
    n: int  # responses of the system that entered both means


@dataclass(frozen=True)
class SystemLevelRow:
    question: str
    signature_id: int
    signature: str
    metric: str
    references: str
    systems: tuple[SystemMeans, ...]
    pearson: CorrelationResult
    spearman: CorrelationResult

    @property
    def n(self) -> int:
        return len(self.systems)

    @property
    def note(self) -> str:
        return _joined_notes(self.pearson, self.spearman)


@dataclass(frozen=True)
class CorrelationReport:
    study_id: int
    study_name: str
    questions: tuple[QuestionSummary, ...]
    rows: tuple[UtteranceRow, ...]
    system_rows: tuple[SystemLevelRow, ...]
    response_count: int
    # The paired data behind the rows, for the scatter plots: question name -> response id -> human
    # score; signature id -> response id -> metric value; response id -> text and system.
    human_scores: Mapping[str, Mapping[int, float]]
    metric_values: Mapping[int, Mapping[int, float]]
    responses: Mapping[int, ResponseLabel]


def correlation_report(*, study: Study, question: Question | None = None) -> CorrelationReport:
    """Every question of the study (or only ``question``) against every metric signature scored on it."""
    if question is not None and question.study_id != study.pk:
        raise ValueError(f"question {question.name!r} does not belong to study {study.name!r}")
    questions = [question] if question is not None else study_questions(study=study)
    human_by_question = study_human_scores(study=study, questions=questions)
    signatures = study_metric_signatures(study=study)
    metric_values = study_metric_values(study=study)
    responses = study_response_labels(study=study)

    rows: list[UtteranceRow] = []
    system_rows: list[SystemLevelRow] = []
    for current in questions:
        human = human_by_question[current.pk]
        for signature in signatures:
            values = metric_values.get(signature.pk, {})
            paired = sorted(response_id for response_id in human if response_id in values)
            rows.append(
                _utterance_row(current, signature, [human[i] for i in paired], [values[i] for i in paired])
            )
            system_rows.append(_system_level_row(current, signature, paired, human, values, responses))
    return CorrelationReport(
        study_id=study.pk,
        study_name=study.name,
        questions=tuple(
            QuestionSummary(q.pk, q.name, q.scale_min, q.scale_max, len(human_by_question[q.pk]))
            for q in questions
        ),
        rows=tuple(rows),
        system_rows=tuple(system_rows),
        response_count=len(responses),
        human_scores={q.name: human_by_question[q.pk] for q in questions},
        metric_values=metric_values,
        responses=responses,
    )


def correlation_rows_as_dicts(report: CorrelationReport) -> list[dict[str, Any]]:
    """The utterance-level table as JSON-ready dicts (the ``study_report --format json`` contract)."""
    return [
        {
            **_signature_fields(row),
            "n": row.n,
            **_correlation_fields(row.pearson, row.spearman),
            "note": row.note,
        }
        for row in report.rows
    ]


def system_level_rows_as_dicts(report: CorrelationReport) -> list[dict[str, Any]]:
    """The system-level table as JSON-ready dicts, with each system's means."""
    return [
        {
            **_signature_fields(row),
            "n": row.n,
            **_correlation_fields(row.pearson, row.spearman),
            "note": row.note,
            "systems": [
                {"system": s.system, "human_mean": s.human_mean, "metric_mean": s.metric_mean, "n": s.n}
                for s in row.systems
            ],
        }
        for row in report.system_rows
    ]


def _utterance_row(
    question: Question, signature: MetricSignature, human: list[float], metric: list[float]
) -> UtteranceRow:
    return UtteranceRow(
        question=question.name,
        signature_id=signature.pk,
        signature=signature.text,
        metric=signature.name,
        references=signature.references_mode,
        pearson=pearson_with_ci(human, metric),
        spearman=spearman_with_ci(human, metric),
    )


def _system_level_row(
    question: Question,
    signature: MetricSignature,
    paired: list[int],
    human: Mapping[int, float],
    values: Mapping[int, float],
    responses: Mapping[int, ResponseLabel],
) -> SystemLevelRow:
    # Both means run over the same responses, so a system is not flattered by items only one side saw.
    by_system: dict[str, list[int]] = defaultdict(list)
    for response_id in paired:
        by_system[responses[response_id].system].append(response_id)
    systems = tuple(
        SystemMeans(
            system=name,
            human_mean=fmean(human[i] for i in ids),
            metric_mean=fmean(values[i] for i in ids),
            n=len(ids),
        )
        for name, ids in sorted(by_system.items())
    )
    human_means = [s.human_mean for s in systems]
    metric_means = [s.metric_mean for s in systems]
    return SystemLevelRow(
        question=question.name,
        signature_id=signature.pk,
        signature=signature.text,
        metric=signature.name,
        references=signature.references_mode,
        systems=systems,
        pearson=_renamed_note(pearson_with_ci(human_means, metric_means)),
        spearman=_renamed_note(spearman_with_ci(human_means, metric_means)),
    )


def _renamed_note(result: CorrelationResult) -> CorrelationResult:
    if result.note != TOO_FEW_ITEMS:
        return result
    return replace(result, note=FEWER_THAN_THREE_SYSTEMS)


def _signature_fields(row: UtteranceRow | SystemLevelRow) -> dict[str, Any]:
    return {
        "question": row.question,
        "metric": row.metric,
        "references": row.references,
        "signature": row.signature,
    }


def _correlation_fields(pearson: CorrelationResult, spearman: CorrelationResult) -> dict[str, Any]:
    return {
        "pearson": pearson.coefficient,
        "pearson_p": pearson.p_value,
        "pearson_ci": [pearson.ci_low, pearson.ci_high],
        "spearman": spearman.coefficient,
        "spearman_p": spearman.p_value,
        "spearman_ci": [spearman.ci_low, spearman.ci_high],
    }


def _joined_notes(*results: CorrelationResult) -> str:
    notes = [result.note for result in results if result.note]
    return "; ".join(dict.fromkeys(notes))
