"""One name for a metric everywhere: short, and unique among the metrics shown together.

A score's signature (``bleu-1|case:mixed|impl:nlg-eval|refs:multi|...|version:0.1.0``, sacrebleu's habit) says
exactly how it was computed, but is too long to read in a table, a legend or a bar label; the metric's name
alone ("bleu-1") is short but not unique once a study holds the same metric by two tools, with one reference
and with several, or with two trained models. The display name is the name, followed by only those parts of
the signature that tell it apart from the other metrics shown with it, in this order of preference: the
implementation (``nlg-eval``), the references (``single``/``multi``), the trained model (``model 3f2a91c0``),
the word vectors, then any other parameter that differs (``tok:13a``), the version last:

    bleu-1 (nlg-eval)      bleu-1 (nltk)      meteor (single)      meteor (multi)      rouge-l

An LLM judge (``llm-judge:<key>``, stats/judge_names.py) is shown as ``llm-judge`` without its key, always
with its template's name and its model ("llm-judge" alone names no judge), then the parts that tell two
judges apart, in this order: the question it asked, how its score is read, the backend, the model's file,
then any other parameter, the version last. A template or a question is shown by its name, with its hash
only where two of them share a name:

    llm-judge (g-eval, smollm2-135m)      llm-judge (g-eval, smollm2-135m, engagingness, argmax)

A pairwise judge (``llm-pairwise:<key>``) is named the same way: ``llm-pairwise (pairwise, smollm2-135m)``.

Every page, figure, export and LaTeX table shows this name, with the full signature on hover and in a legend
(the report's ``metric_names``): two rows never share a name while their signatures differ.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from stats.judge_names import JUDGE_PREFIX, MASS_PREFIX, PAIRWISE_PREFIX, named_part, shown_name

# The parameters that tell two signatures of one metric apart, most telling first; any other parameter
# follows in alphabetical order, and the version comes last.
PREFERRED = ("impl", "refs", "model", "vectors", "artifact", "plugin")
LAST = ("version",)
SHORT_HASH = 8  # characters of a model's or artifact's content hash shown
# An LLM judge's: what it asks and whom, always; then what tells two judges apart (``asked``: the benchmark's
# judges of another question than the one compared, stats/benchmark/judges.py).
JUDGE_ALWAYS = ("template", "model")
JUDGE_PREFERRED = ("template", "model", "question", "read", "asked", "backend", "artifact")
_NAMED_WITH_HASH = ("template", "question")  # values "<name>@<hash>", shown by their name


@dataclass(frozen=True)
class DisplayName:
    """``name`` (the metric's, as the report shows it) and ``detail`` (the distinguishing parts, "" when the
    name alone is unique)."""

    name: str
    detail: str = ""

    @property
    def text(self) -> str:
        return f"{self.name} ({self.detail})" if self.detail else self.name


def signature_parameters(signature: str) -> dict[str, str]:
    """``bleu-2|refs:multi|tok:none`` -> {"refs": "multi", "tok": "none"}."""
    return dict(part.split(":", 1) for part in signature.split("|")[1:] if ":" in part)


def display_names(metrics: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, DisplayName]:
    """Display names of the signatures shown together: ``metrics`` maps each signature to its metric's name
    (an external metric's is "usr (external)"). Unique among them, whatever the input."""
    named = dict(metrics.items() if isinstance(metrics, Mapping) else metrics)
    by_name: dict[str, list[str]] = {}
    for signature, name in named.items():
        by_name.setdefault(shown_name(name), []).append(signature)
    names: dict[str, DisplayName] = {}
    for name, signatures in by_name.items():
        if name in (JUDGE_PREFIX, MASS_PREFIX, PAIRWISE_PREFIX):
            names.update(_judge_names(name, signatures))
            continue
        if len(signatures) == 1:
            names[signatures[0]] = DisplayName(name)
            continue
        parameters = {signature: signature_parameters(signature) for signature in signatures}
        every = {key for values in parameters.values() for key in values}
        others = sorted(every - set(PREFERRED) - set(LAST))
        order = [key for key in (*PREFERRED, *others, *LAST) if key in every]
        for signature in signatures:
            keys = _telling_keys(signature, parameters, order)
            parts = [_part(key, parameters[signature].get(key)) for key in keys]
            names[signature] = DisplayName(name, ", ".join(part for part in parts if part))
    return _unique(names)


def _judge_names(name: str, signatures: Sequence[str]) -> dict[str, DisplayName]:
    """Judges' names (or their masses'): the template and the model, then the parts that tell them apart."""
    parameters = {signature: signature_parameters(signature) for signature in signatures}
    every = {key for values in parameters.values() for key in values}
    others = sorted(every - set(JUDGE_PREFERRED) - set(LAST))
    order = [key for key in (*JUDGE_PREFERRED, *others, *LAST) if key in every]
    shared = _shared_names(parameters.values())
    names = {}
    for signature in signatures:
        always = [key for key in JUDGE_ALWAYS if key in parameters[signature]]
        rest = [key for key in order if key not in always]
        keys = sorted([*always, *_telling_keys(signature, parameters, rest, always)], key=order.index)
        parts = [_judge_part(key, parameters[signature].get(key), shared) for key in keys]
        names[signature] = DisplayName(name, ", ".join(part for part in parts if part))
    return names


def _shared_names(parameters: Iterable[Mapping[str, str]]) -> set[tuple[str, str]]:
    """(key, name) of the templates and questions whose name stands for two different values (hashes)."""
    values: dict[tuple[str, str], set[str]] = {}
    for each in parameters:
        for key in _NAMED_WITH_HASH:
            if key in each:
                values.setdefault((key, named_part(each[key])[0]), set()).add(each[key])
    return {named for named, found in values.items() if len(found) > 1}


def _judge_part(key: str, value: str | None, shared: set[tuple[str, str]]) -> str:
    if value is None:
        return ""
    if key in _NAMED_WITH_HASH:
        base, digest = named_part(value)
        return f"{base}@{digest[:SHORT_HASH]}" if (key, base) in shared and digest else base
    if key == "asked":
        return f"asked {value}"
    if key == "artifact":
        return f"file {value[:SHORT_HASH]}"
    if key in ("model", "read", "backend", "reads"):
        return value
    return f"{key}:{value}"


def _telling_keys(
    signature: str,
    parameters: Mapping[str, Mapping[str, str]],
    order: list[str],
    shown: Sequence[str] = (),
) -> list[str]:
    """The keys, in order of preference, that tell ``signature`` apart from every other of its metric: a key
    is taken when its value differs from some rival's that the keys taken so far (and the keys ``shown``
    anyway) leave alike."""
    own = parameters[signature]
    rivals = [
        values
        for other, values in parameters.items()
        if other != signature and all(values.get(key) == own.get(key) for key in shown)
    ]
    taken: list[str] = []
    for key in order:
        if not rivals:
            break
        alike = [values for values in rivals if values.get(key) == own.get(key)]
        if len(alike) < len(rivals):
            taken.append(key)
            rivals = alike
    return taken


def _part(key: str, value: str | None) -> str:
    if value is None:
        return f"no {key}" if key in ("refs", "model", "vectors") else ""
    if key in ("impl", "refs", "vectors", "plugin"):
        return value
    if key == "model":
        return f"model {value[:SHORT_HASH]}"
    if key == "artifact":
        return f"vectors {value[:SHORT_HASH]}"
    return f"{key}:{value}"


def _unique(names: dict[str, DisplayName]) -> dict[str, DisplayName]:
    """Where two signatures still read the same (a name shared by an external and a built-in metric's
    parameters, say), each gets a numbered suffix in signature order."""
    seen: dict[str, list[str]] = {}
    for signature, name in names.items():
        seen.setdefault(name.text, []).append(signature)
    result = dict(names)
    for signatures in seen.values():
        if len(signatures) > 1:
            for number, signature in enumerate(sorted(signatures), start=1):
                name = names[signature]
                detail = f"{name.detail}, #{number}" if name.detail else f"#{number}"
                result[signature] = DisplayName(name.name, detail)
    return result
