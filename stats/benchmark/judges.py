"""LLM judges across studies: one row per judge, whatever each study's questions are.

Metrics are matched across studies by their signature text (stats/benchmark/table.py), but a judge's name
and signature hold the question it asked (``llm-judge:<key>``: the key hashes the judge's definition, the
question's text among it; the signature names the question and its scale), so the same prompt on the same
model is another signature on every study. The benchmark compares one question per study (the one asked
for, or each study's first); a judge that asked it is matched by what does not depend on the study:
``llm-judge`` with its template (name and hash), backend, model, model file, reading, what it reads and its
version. So "g-eval on smollm2-135m" is one row across studies, and two templates (or models, or readings)
are two rows. A judge that asked another question of its study correlates with the compared one as any
metric; it is matched by the same parts and the name of the question it asked (``asked``). Two judges of
one study that would still share a row (the question's text changed between two runs) keep their
question's hash in ``asked``: each is then a row of its own.

Each judge's cell carries its model's mean mass on the scale's labels on that study, and says so when it
is below 0.5 (stats/report/judges.py).

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from stats.benchmark.cells import BenchmarkCell
from stats.benchmark.table import MetricKey, StudyColumn
from stats.display_names import signature_parameters
from stats.judge_names import JUDGE_PREFIX, is_judge, named_part
from stats.report.document_types import JudgeFields
from stats.report.judges import LOW_MASS_OPENING

STUDY_PARTS = ("question", "scale")  # what a judge's signature holds of the study's question


def benchmark_keys(keys: Sequence[MetricKey], question: str) -> dict[str, MetricKey]:
    """Signature text -> the key a benchmark row matches the metric by across studies, the study's compared
    question being ``question``: a judge's study-independent identity, any other metric's own key."""
    identities = {key.text: _identity(key.text, question) for key in keys if is_judge(key.name)}
    shared = Counter(identities.values())
    matched: dict[str, MetricKey] = {}
    for key in keys:
        identity = identities.get(key.text)
        if identity is None:
            matched[key.text] = key
            continue
        if shared[identity] > 1:
            identity = _identity(key.text, question, with_hash=True)
        matched[key.text] = MetricKey(identity, JUDGE_PREFIX)
    return matched


def matched_keys(keys: Sequence[MetricKey], question: str) -> list[MetricKey]:
    """``keys`` as the benchmark matches them (:func:`benchmark_keys`), in their order."""
    return list(benchmark_keys(keys, question).values())


def matched_column(
    column: StudyColumn,
    keys: Mapping[str, MetricKey],
    judges: Mapping[str, JudgeFields],
) -> StudyColumn:
    """``column`` with its cells and reasons under the matched keys (``keys``: :func:`benchmark_keys`), each
    judge's cell with its mean mass on labels (``judges``: signature text -> its fields)."""

    def text(signature: str) -> str:
        key = keys.get(signature)
        return key.text if key is not None else signature

    cells = {
        text(signature): _with_mass(cell, judges.get(signature)) for signature, cell in column.cells.items()
    }
    missing = {text(signature): reason for signature, reason in (column.missing or {}).items()}
    return StudyColumn(column.study, cells, missing)


def _with_mass(cell: BenchmarkCell, judge: JudgeFields | None) -> BenchmarkCell:
    if judge is None:
        return cell
    # A report row's note says it of "this question" (stats/report/judges.py); a cell names the question.
    parts = [part for part in cell.note.split("; ") if part and not part.startswith(LOW_MASS_OPENING)]
    note = "; ".join([*parts, judge["note"]] if judge["note"] else parts)
    return replace(cell, label_mass=judge["label_mass"], note=note)


def _identity(text: str, question: str, *, with_hash: bool = False) -> str:
    """``llm-judge|<the signature's parameters but the question and scale>``, with ``asked`` where the judge
    asked another question than ``question`` (or ``with_hash``: its question with the hash)."""
    parameters = signature_parameters(text)
    asked = parameters.get("question", "")
    kept = {key: value for key, value in parameters.items() if key not in STUDY_PARTS}
    if with_hash:
        kept["asked"] = asked
    elif named_part(asked)[0] != question:
        kept["asked"] = named_part(asked)[0]
    ordered = sorted(kept, key=lambda key: (key == "version", key))  # as every signature (version last)
    return "|".join([JUDGE_PREFIX, *(f"{key}:{kept[key]}" for key in ordered)])
