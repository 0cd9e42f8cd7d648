"""The captions' sentences (the study and question, the raters, the filter, the tools that computed the
baselines, the rows that could not be computed, the Rank column) and the tables' \\label."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TypeVar

from stats.latex.cells import latex_escape, reason
from stats.latex.labels import EXTERNAL_MARK, is_external, metric_label
from stats.report.document_types import DiversityRow, HumanEntry, MetricRow, QuestionSummary, ReportDocument

Entry = TypeVar("Entry", bound=Mapping[str, object])
EXTERNAL_NOTE = (
    EXTERNAL_MARK + "Computed elsewhere and imported into the app (its signature names the source)."
)
THREE_DECIMAL_P_RULE = r"$p$-values under 0.001 are shown as $< 0.001$."
JUDGE_OWN_MARK = r"$^{\star}$"  # an LLM judge that asked the table's question


def of_question(section: Sequence[Entry] | None, question: str) -> list[Entry]:
    return [entry for entry in section or [] if entry.get("question") == question]


def question_summary(document: ReportDocument, question: str) -> QuestionSummary | None:
    for summary in document.get("questions") or []:
        if summary.get("name") == question:
            return summary
    return None


def study_phrase(document: ReportDocument, study_name: str | None) -> str:
    name = study_name if study_name is not None else str(document.get("study_name", ""))
    return f"study ``{latex_escape(name)}''"


def correlation_caption(
    document: ReportDocument,
    question: str,
    study_name: str | None,
    rows: Sequence[MetricRow],
    labels: Mapping[int, str],
    human: Mapping[str, HumanEntry],
) -> str:
    summary = question_summary(document, question)
    replies = summary.get("human_scored") if summary else None
    sentences = [
        "Correlation between automatic metrics and human scores: "
        f"{study_phrase(document, study_name)}, question ``{latex_escape(question)}''"
        + (f", {replies} replies with a human score" if replies is not None else "")
        + "."
    ]
    raters = max((int(row.get("raters") or 0) for row in human.values()), default=0)
    if human and raters:
        sentences.append(
            "Human (Avg): each rater against the mean of the others, averaged over "
            f"{raters} raters; Human (Max): the best rater."
        )
    sentences.append(filter_sentence(document, question))
    sentences.append(
        r"$p$-values in parentheses ($< 0.01$ below 0.01); the best metric in each column in bold."
    )
    if any(is_external(row) for row in rows):
        sentences.append(EXTERNAL_NOTE)
    sentences.append(implementation_sentence(rows, labels))
    sentences.append(judge_sentence(rows, labels))
    fewer = [
        f"{labels[id(row)]} ($n = {row['n']}$)"
        for row in rows
        if replies is not None
        and isinstance(row.get("n"), int)
        and row["n"] < replies
        and not row.get("no_values")  # said below, with the reason
    ]
    if fewer:
        sentences.append(
            "Replies with no score of the metric are left out of its row: " + ", ".join(fewer) + "."
        )
    missing = [
        f"{latex_escape(label)}, {reason(human_row['note'])}"
        for label, human_row in human.items()
        if human_row.get("note") and (human_row.get("pearson") is None or human_row.get("spearman") is None)
    ]
    missing += [
        f"{labels[id(row)]}, {reason(row['note'])}"
        for row in rows
        if row.get("note") and (row.get("pearson") is None or row.get("spearman") is None)
    ]
    if missing:
        sentences.append("Not computable (n/a): " + "; ".join(missing) + ".")
    return " ".join(sentence for sentence in sentences if sentence)


def rank_sentence(document: ReportDocument, question: str) -> str:
    """What the Rank column is (stats/report/meta.py's significance clusters)."""
    clusters = of_question(document.get("significance_clusters"), question)
    if not clusters:
        return ""
    entry = clusters[0]
    if entry["note"]:
        return f" Rank: none ({latex_escape(entry['note'])})."
    rule = entry.get("rule_description") or (
        f"a new cluster starts where a metric is worse than the best of the current one, p < {entry['alpha']:g}"
    )
    return (
        f" Rank: significance cluster by {latex_escape(entry['statistic'])}; {latex_escape(rule)}"
        f" ({latex_escape(entry['test'])} permutation test, {entry['permutations']} permutations)."
    )


def judge_sentence(rows: Sequence[MetricRow], labels: Mapping[int, str]) -> str:
    """What the LLM judges are, which asked the table's question (marked) and which another, and the mean
    probability each one's model put on the scale's labels; below 0.5, that the prompt or the model does not
    fit (stats/report/judges.py)."""
    judges = [(labels[id(row)], row["judge"]) for row in rows if "judge" in row]
    if not judges:
        return ""
    sentence = (
        "LLM judge: a language model rates the reply on one question of the study, its score read from the "
        "probabilities of the scale's labels as its next token (G-EVAL; Liu et al., 2023); "
        f"{JUDGE_OWN_MARK}: the judge asked this question"
    )
    others = [
        f"{label}, {latex_escape(judge['question'])}" for label, judge in judges if not judge["own_question"]
    ]
    sentence += f"; the others asked: {'; '.join(others)}." if others else "."
    masses = [
        f"{label} {judge['label_mass']:.2f}" for label, judge in judges if judge["label_mass"] is not None
    ]
    if masses:
        sentence += " Mean probability on the labels: " + "; ".join(masses) + "."
    low = [label for label, judge in judges if judge["note"]]
    if low:
        sentence += " Below 0.5, the prompt or the model does not fit the question: " + ", ".join(low) + "."
    return sentence


# The tools a baseline can be computed by, as the caption names them.
IMPLEMENTATION_DESCRIPTIONS = {
    "nltk": "nltk's formulas",
    "nlg-eval": "nlg-eval (pycocoevalcap; METEOR 1.5)",
    "sacrebleu": "sacrebleu",
    "rouge-score": "Google's rouge-score",
}


def implementation_sentence(rows: Sequence[MetricRow], labels: Mapping[int, str]) -> str:
    """Which tool computed which baseline ("Computed with nlg-eval (pycocoevalcap; METEOR 1.5): BLEU-4,
    METEOR; with nltk's formulas: ROUGE-L."), so that a reader puts each number beside the right paper's."""
    by_tool: dict[str, list[str]] = {}
    for row in rows:
        tool = str(row.get("implementation", ""))
        if tool in IMPLEMENTATION_DESCRIPTIONS:
            by_tool.setdefault(tool, []).append(labels[id(row)])
    if not by_tool:
        return ""
    parts = [
        f"{IMPLEMENTATION_DESCRIPTIONS[tool]}: {', '.join(by_tool[tool])}"
        for tool in IMPLEMENTATION_DESCRIPTIONS
        if tool in by_tool
    ]
    return "Computed with " + "; with ".join(parts) + " (each score's signature names it: impl)."


def filter_sentence(document: ReportDocument, question: str) -> str:
    entries = of_question(document.get("filter"), question)
    if not entries:
        return ""
    entry = entries[0]
    if not entry.get("ratings_total"):
        summary = question_summary(document, question)
        if summary and summary.get("imported_means"):
            return "The human scores are imported means: there are no per-rater scores to filter."
        return "No per-rater ratings."
    description = str(entry.get("description") or "").strip()
    removed = int(entry.get("ratings_removed") or 0)
    total = entry.get("ratings_total")
    annotators = int(entry.get("annotators_removed") or 0)
    sentence = f"Filter: {latex_escape(description)}" if description else "Filter: none"
    sentence += (
        f"; {removed} of {total} ratings removed" if total is not None else f"; {removed} ratings removed"
    )
    if annotators:
        sentence += f" ({annotators} rater{'s' if annotators != 1 else ''})"
    sentence += "."
    note = str(entry.get("normalisation_note") or "").strip()
    if note:
        sentence += f" Normalisation: {latex_escape(note)}."
    return sentence


def diversity_notes(rows: Sequence[DiversityRow]) -> str:
    notes = [
        f"{metric_label(str(row.get('metric', '')))}, {reason(row['note'])}"
        for row in rows
        if row.get("note") and (row.get("spearman") is None or row.get("pearson") is None)
    ]
    return " Not computable (n/a): " + "; ".join(notes) + "." if notes else ""


def table_label(document: ReportDocument, question: str | None, study_name: str | None, table: str) -> str:
    name = study_name if study_name is not None else str(document.get("study_name", ""))
    study = _slug(name) or f"study-{_slug(str(document.get('study', '')))}"
    parts = ["tab", study] + ([_slug(question) or "question"] if question is not None else []) + [table]
    return ":".join([parts[0], "-".join(parts[1:])])


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
