"""Metric names as the papers print them, the order of blocks and rows, and each row's printed label (the
distinguishing part of its display name, or the signature parts that tell two rows apart)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from stats.judge_names import JUDGE_PREFIX, shown_name
from stats.latex.cells import latex_escape
from stats.report.document_types import MetricRow
from stats.report.types import EXTERNAL_ORIGIN, GROUP_ORDER

_FIXED_NAMES = {
    "rouge-l": "ROUGE-L",
    "meteor": "METEOR",
    "embedding-average": "Embedding Average",
    "vector-extrema": "Vector Extrema",
    "greedy-matching": "Greedy Matching",
    # Tao et al. (2018), Table 2's names for RUBER's parts
    "ruber-referenced": r"Vector pool ($s_R$)",
    "vector-pool-unreferenced": "Vector pool",
    "ruber-unreferenced": r"NN scorer ($s_U$)",
    "bert-ruber-referenced": r"BERT-RUBER $s_R$",
    "bert-ruber-unreferenced": r"BERT-RUBER $s_U$",
    "recall-vector-extrema": "Recall Vector Extrema",
    "corpus-bleu": "Corpus BLEU",
    # the names their papers print ("cider-d" would stand beside "BLEU-4")
    "cider-d": "CIDEr-D",
    "chrf": "chrF",
    "chrf++": "chrF++",
    "rouge-lsum": "ROUGE-Lsum",
    "rouge-l-precision": "ROUGE-L precision",
    "rouge-l-recall": "ROUGE-L recall",
    "maude": "MaUde",
    "cross-ruber-unreferenced": r"Cross-RUBER $s_U$",
    "cross-ruber-referenced": r"Cross-RUBER $s_R$",
    JUDGE_PREFIX: "LLM judge",  # llm-judge:<key>, named by its template and model (stats/display_names.py)
}
_BLENDS = {"min": "min", "gmean": "geometric mean", "amean": "arithmetic mean", "max": "max"}
_CELL_PARTS = {
    "word2vec": "word2vec",
    "bert": "BERT",
    "rnn": "Bi-RNN",
    "max": "max pooling",
    "mean": "mean pooling",
    "ranking": "ranking",
    "ce": "cross-entropy",
}
# The papers' row order: n-gram overlap, embeddings, RUBER's parts, its blends (Tao et al., 2018, Table 2),
# then Gupta et al. (2019), Table 5's diversity metrics.
METRIC_ORDER = (
    "bleu-1",
    "bleu-2",
    "bleu-3",
    "bleu-4",
    "rouge-l",
    "meteor",
    "embedding-average",
    "vector-extrema",
    "greedy-matching",
    "ruber-referenced",
    "bert-ruber-referenced",
    "vector-pool-unreferenced",
    "ruber-unreferenced",
    "bert-ruber-unreferenced",
    "ruber-min",
    "ruber-gmean",
    "ruber-amean",
    "ruber-max",
    "bert-ruber-min",
    "bert-ruber-gmean",
    "bert-ruber-amean",
    "bert-ruber-max",
    "distinct-1",
    "distinct-2",
    "distinct-3",
    "self-bleu-2",
    "self-bleu-4",
    "recall-bleu-2",
    "recall-bleu-4",
    "recall-meteor",
    "recall-rouge-l",
    "recall-vector-extrema",
    "recall-greedy-matching",
    "corpus-bleu",
)
REFERENCE_ORDER = {"single": 0, "multi": 1}
EXTERNAL_MARK = r"$^\dagger$"
_SIGNATURE_VALUE_LIMIT = 12  # a model's sha256 in a disambiguating suffix is cut to this many characters


def metric_label(name: str) -> str:
    """The name a paper prints for a metric, as LaTeX; an unknown name is printed as it is, escaped."""
    name = shown_name(name)
    if name in _FIXED_NAMES:
        return _FIXED_NAMES[name]
    match = re.fullmatch(r"(recall-|self-)?bleu-(\d)", name)
    if match:
        prefix = {"recall-": "Recall ", "self-": "Self "}.get(match.group(1) or "", "")
        return f"{prefix}BLEU-{match.group(2)}"
    match = re.fullmatch(r"distinct-(\d)", name)
    if match:
        return f"Distinct-{match.group(1)}"
    match = re.fullmatch(r"(cross-ruber|bert-ruber|ruber)-(min|gmean|amean|max)", name)
    if match:
        family = {"bert-ruber": "BERT-RUBER", "cross-ruber": "Cross-RUBER"}.get(match.group(1), "RUBER")
        return f"{family} {_BLENDS[match.group(2)]}"
    match = re.fullmatch(r"bert-ruber-unreferenced:(word2vec|bert)-(rnn|max|mean)-(ranking|ce)", name)
    if match:
        return r"BERT-RUBER $s_U$ (" + ", ".join(_CELL_PARTS[part] for part in match.groups()) + ")"
    match = re.fullmatch(r"recall-(.+)", name)
    if match and match.group(1) in _FIXED_NAMES:
        return f"Recall {_FIXED_NAMES[match.group(1)]}"
    return latex_escape(name)


def group_of(row: MetricRow) -> str:
    return str(row.get("group") or "Other")


def group_order(rows: Sequence[MetricRow]) -> list[str]:
    present = {group_of(row) for row in rows}
    return [g for g in GROUP_ORDER if g in present] + sorted(present - set(GROUP_ORDER))


def metric_rank(name: str) -> tuple[int, str]:
    base = name.split(":", 1)[0] if name.startswith("bert-ruber-unreferenced:") else name
    rank = METRIC_ORDER.index(base) if base in METRIC_ORDER else len(METRIC_ORDER)
    return rank, name


def row_order(row: MetricRow) -> tuple[int, str, int, str]:
    metric = str(row.get("metric", ""))
    if shown_name(metric) == JUDGE_PREFIX:  # LLM judges by their display names, not their keys
        metric = str(row.get("display") or metric)
    return (
        *metric_rank(metric),
        REFERENCE_ORDER.get(str(row.get("references")), 2),
        str(row.get("signature", "")),
    )


def display_detail(entry: Mapping[str, object], name: str) -> str | None:
    """The part of an entry's display name (stats/display_names.py) after its metric's name: "" for a
    name that is unique alone, ``None`` in a document from before display names. A judge's name is read
    without its key (``llm-judge``)."""
    name = shown_name(name)
    display = entry.get("display")
    if not isinstance(display, str) or not display:
        return None
    if display == name:
        return ""
    if display.startswith(f"{name} (") and display.endswith(")"):
        return display[len(name) + 2 : -1]
    return None


def paper_label(name: str, detail: str, external: bool) -> str:
    """The paper's name of a metric (a dagger for an external one) and the display name's distinguishing part."""
    label = metric_label(name.removesuffix(" (external)")) + EXTERNAL_MARK if external else metric_label(name)
    return f"{label} ({latex_escape(detail)})" if detail else label


def row_labels(rows: Sequence[MetricRow]) -> dict[int, str]:
    """Each row's printed name: the paper's name of the metric and the distinguishing part of its display name
    (the page's and every export's). In a document from before display names: the metric's, plus its reference
    mode where the same metric appears with one reference and with several, plus the differing signature parts
    where that still is not unique."""
    details = [display_detail(row, str(row.get("metric", ""))) for row in rows]
    if rows and all(detail is not None for detail in details):
        return {
            id(row): paper_label(str(row.get("metric", "")), detail or "", is_external(row))
            for row, detail in zip(rows, details, strict=True)
        }
    modes: dict[str, set[str]] = {}
    implementations: dict[str, set[str]] = {}
    for row in rows:
        modes.setdefault(str(row.get("metric", "")), set()).add(str(row.get("references")))
        implementations.setdefault(str(row.get("metric", "")), set()).add(str(row.get("implementation", "")))
    named = []
    for row in rows:
        metric = str(row.get("metric", ""))
        label = metric_label(metric)
        if is_external(row):  # the report names it "<name> (external)": the paper's name and a dagger
            label = metric_label(metric.removesuffix(" (external)")) + EXTERNAL_MARK
        references = str(row.get("references"))
        if references in REFERENCE_ORDER and {"single", "multi"} <= modes[metric]:
            label += f" ({references})"
        if len(implementations[metric]) > 1:  # two tools' numbers of one metric: say whose each row is
            label += f" ({latex_escape(str(row.get('implementation', '')))})"
        named.append((id(row), label, str(row.get("signature", ""))))
    return disambiguated(named)


def disambiguated(named: Sequence[tuple[int, str, str]]) -> dict[int, str]:
    """(key, label, signature text) -> key: label, with the signature parts that tell apart rows whose
    labels are equal (``tok:none``, ``model:1a2b3c4d5e6f``)."""
    by_label: dict[str, list[tuple[int, str]]] = {}
    for key, label, signature in named:
        by_label.setdefault(label, []).append((key, signature))
    labels = {}
    for label, members in by_label.items():
        if len(members) == 1:
            labels[members[0][0]] = label
            continue
        parts = {key: set(signature.split("|")[1:]) for key, signature in members}
        shared = set.intersection(*parts.values())
        for key, _ in members:
            differing = sorted(parts[key] - shared)
            suffix = ", ".join(latex_escape(_shortened(part)) for part in differing)
            labels[key] = f"{label} ({suffix})" if suffix else label
    return labels


def _shortened(part: str) -> str:
    key, _, value = part.partition(":")
    if len(value) > _SIGNATURE_VALUE_LIMIT:
        return f"{key}:{value[:_SIGNATURE_VALUE_LIMIT]}"
    return part


def is_external(row: MetricRow) -> bool:
    return row.get("origin") == EXTERNAL_ORIGIN
