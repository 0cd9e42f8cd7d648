"""The names of a question's metric signatures in its figures: a label (the report's display name, plain
text) and a slug (figure and file names, safe in a URL path), both unique within the question; and the
document's entries of one question. Pure Python."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from stats.judge_names import is_judge, shown_name
from stats.report.document_types import ReportDocument

REFERENCE_MODES = ("single", "multi")
Entry = TypeVar("Entry", bound=Mapping[str, object])


@dataclass(frozen=True)
class SignatureName:
    label: str  # plain text, e.g. "bleu-2 (multi)"; unique within the question
    slug: str  # e.g. "bleu-2-multi"; unique within the question


def slug(value: str, fallback: str) -> str:
    """Lower-case ASCII letters, digits and hyphens; a name with none of them (e.g. all Chinese) becomes
    ``fallback`` plus a short hash of it, so that two such names stay apart."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:80].strip("-")
    return text or f"{fallback}-{_short_hash(value)}"


def signature_names(document: ReportDocument, question: str) -> dict[str, SignatureName]:
    """A label and a slug per signature of ``question``: the label is the document's display name
    (``metric_names``; in a document from before them, metric and reference mode, "bleu-2 (multi)", plus the
    differing parameters); the slug the metric and reference mode ("bleu-2-multi"), plus the parameters that
    tell apart signatures sharing both (e.g. "bleu-2-multi-tok-none"), plus a short hash if even that does
    not; an LLM judge's slug is its display name's ("llm-judge-g-eval-smollm2-135m")."""
    described: dict[str, tuple[str, str]] = {}
    for row in of_question(document.get("rows"), question):
        described.setdefault(row["signature"], (row["metric"], row.get("references") or ""))
    for signature, metric in [
        *((e["signature"], e["metric"]) for e in of_question(document.get("system_level"), question)),
        *((e["signature"], e["metric"]) for e in of_question(document.get("quantiles"), question)),
        *((e["signature"], e["metric"]) for e in of_question(document.get("references_curve"), question)),
    ]:
        described.setdefault(signature, (metric, ""))
    for comparison in of_question(document.get("metric_comparisons"), question):
        described.setdefault(comparison["first"], (comparison["first_metric"], ""))
        described.setdefault(comparison["second"], (comparison["second_metric"], ""))
    legend = {entry["signature"]: entry["display"] for entry in document.get("metric_names") or []}
    groups: dict[str, list[str]] = {}
    for signature, (metric, references) in described.items():
        references = references or _parameters(signature).get("refs", "")
        base = f"{metric}-{references}" if references in REFERENCE_MODES else metric
        if is_judge(metric):  # its display name, not its key: "llm-judge-g-eval-smollm2-135m"
            base = legend.get(signature, shown_name(metric))
        groups.setdefault(slug(base, "metric"), []).append(signature)
    names: dict[str, SignatureName] = {}
    for base_slug, signatures in groups.items():
        parameters = {signature: _parameters(signature) for signature in signatures}
        keys = sorted({key for values in parameters.values() for key in values} - {"refs"})
        differing = [key for key in keys if len({values.get(key) for values in parameters.values()}) > 1]
        for signature in signatures:
            metric, references = described[signature]
            references = references or parameters[signature].get("refs", "")
            label = f"{metric} ({references})" if references in REFERENCE_MODES else metric
            name_slug = base_slug
            if len(signatures) > 1:
                extra = [(key, parameters[signature].get(key, "-")) for key in differing]
                tools = [values.get("impl", "") for values in parameters.values()]
                if "impl" in differing and len(set(tools)) == len(tools):
                    # two tools' numbers of one metric: the tool tells them apart, not its every parameter
                    extra = [("impl", parameters[signature].get("impl", "-"))]
                label += " [" + ", ".join(f"{key}:{value}" for key, value in extra) + "]" if extra else ""
                name_slug += "-" + slug("-".join(f"{key}-{value}" for key, value in extra), "variant")
            names[signature] = SignatureName(label, name_slug)
    # The labels are the report's display names (stats/display_names.py), the page's and every
    # export's; the slugs (figure and file names) stay what they were, but for LLM judges'.
    names = {
        signature: SignatureName(legend.get(signature, name.label), name.slug)
        for signature, name in names.items()
    }
    return _made_unique(names)


def _made_unique(names: dict[str, SignatureName]) -> dict[str, SignatureName]:
    labels = [name.label for name in names.values()]
    slugs = [name.slug for name in names.values()]
    return {
        signature: SignatureName(
            f"{name.label} [{_short_hash(signature)}]" if labels.count(name.label) > 1 else name.label,
            f"{name.slug}-{_short_hash(signature)}" if slugs.count(name.slug) > 1 else name.slug,
        )
        for signature, name in names.items()
    }


def _parameters(signature: str) -> dict[str, str]:
    """``bleu-2|refs:multi|tok:none`` -> {"refs": "multi", "tok": "none"}."""
    return dict(part.split(":", 1) for part in signature.split("|")[1:] if ":" in part)


def _short_hash(value: str) -> str:
    return hashlib.sha1(value.encode("utf-8")).hexdigest()[:8]


def of_question(entries: Sequence[Entry] | None, question: str) -> list[Entry]:
    return [entry for entry in entries or [] if entry.get("question") == question]


def question_signatures(document: ReportDocument, question: str) -> list[str]:
    """The question's signatures in the order of its table rows."""
    return list(dict.fromkeys(row["signature"] for row in of_question(document.get("rows"), question)))
