"""LLM judges in the report: metrics like any other, with what each asked and how well its model fitted.

A judge (``llm-judge:<key>``, stats/judge_names.py) rates one question of the study with the G-EVAL score,
the probability-weighted mean of the scale's labels read from the model's next token (Liu et al., 2023). It
takes part in every section as any metric; its companion ``llm-judge-mass:<key>``, the probability the model
put on the scale's labels per reply, is no metric (correlation/report/loading.py leaves it out of the
report's signatures) but is kept beside the judge: each judge's legend entry and rows carry the mean mass
over the replies it judged, and the question it asked (``own_question`` on the rows of that question).
Where the mean mass is below :data:`LOW_LABEL_MASS`, the model mostly answered something other than a
label: the score is read from what little probability is left, and the report says so in words.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from statistics import fmean

from stats.display_names import signature_parameters
from stats.judge_names import is_judge, judge_question, named_part
from stats.report.document_types import JudgeFields, ReportDocument
from stats.report.types import ReportInputs, SignatureInputs, UnvaluedMetric

LOW_LABEL_MASS = 0.5  # below it, more than half the model's next-token probability went elsewhere
THIS_QUESTION = "this question"
LOW_MASS_OPENING = "the model put only"  # how the low-mass sentence starts (a note that has it says it once)


def judge_fields(inputs: ReportInputs) -> dict[str, JudgeFields]:
    """Signature text -> what each judge of the report asked, with its mean mass on labels over the
    replies of the report (the ones the researcher excluded are not among them)."""
    judges: Iterable[SignatureInputs | UnvaluedMetric] = [*inputs.signatures, *inputs.unvalued]
    fields: dict[str, JudgeFields] = {}
    for judge in judges:
        if not is_judge(judge.name) or judge.text in fields:
            continue
        parameters = signature_parameters(judge.text)
        stored = inputs.metric_values.get(judge.label_mass_id, {}) if judge.label_mass_id is not None else {}
        masses = [mass for reply, mass in stored.items() if reply in inputs.responses and math.isfinite(mass)]
        mean = fmean(masses) if masses else None
        fields[judge.text] = {
            "template": named_part(parameters.get("template", ""))[0],
            "model": parameters.get("model", ""),
            "question": judge_question(parameters),
            "read": parameters.get("read", ""),
            "label_mass": mean,
            "label_mass_replies": len(masses),
            "note": low_mass_note(mean, f"its question, {judge_question(parameters)}"),
        }
    return fields


def low_mass_note(mass: float | None, question: str = THIS_QUESTION) -> str:
    """The sentence a judge's row carries when its model's mean mass on labels is below 0.5, else ""."""
    if mass is None or mass >= LOW_LABEL_MASS:
        return ""
    share = "less than 1%" if mass < 0.005 else f"{mass:.0%}"
    return (
        f"{LOW_MASS_OPENING} {share} of its next-token probability on the scale's labels: the prompt or the "
        f"model does not fit {question}"
    )


def add_judges(document: ReportDocument, fields: Mapping[str, JudgeFields]) -> None:
    """Writes ``judge`` into every judge's rows and legend entry, and the low-mass sentence into its rows'
    ``note`` (worded for the question of the row)."""
    if not fields:
        return
    for row in document["rows"]:
        judge = fields.get(row["signature"])
        if judge is None:
            continue
        own = judge["question"] == row["question"]
        row["judge"] = {**judge, "own_question": own}
        note = low_mass_note(judge["label_mass"]) if own else judge["note"]
        if note:
            row["note"] = "; ".join(part for part in (row["note"], note) if part)
    for entry in document.get("metric_names") or []:
        legend = fields.get(entry["signature"])
        if legend is not None:
            entry["judge"] = legend
