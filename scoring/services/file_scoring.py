"""Scoring files without a study (the sacrebleu habit): replies, references and contexts in, scores out.

``manage.py score_files --hyp sys.txt --ref ref1.txt --ref ref2.txt --metrics bleu-4,meteor`` and
``POST /api/score/`` read one reply per line (references: one file per reference, aligned line by line;
contexts: one per line, turns separated by tabs or DailyDialog's `` __eou__ ``, oldest first) and give every
metric's sentence-level values, its corpus-level value, and its signature, computed exactly as a scoring
run computes them: same registry, same implementations, same signatures (``refs:single`` when every line has
at most one reference, else ``refs:multi``).

The corpus-level value is the implementation's own corpus statistic where it defines one (BLEU-4: nltk's
corpus_bleu, sacrebleu's corpus BLEU, coco's corpus BLEU; chrF and chrF++: sacrebleu's corpus score; named
by its own signature), else the mean of the sentence values (``corpus`` says which).

Bad input changes nothing and names the file and line: different line counts, an empty file, a line that is
not UTF-8, an unknown metric or implementation.
"""

from __future__ import annotations

import codecs
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring.metrics.cider_specs import CIDER_D_NAME, DF_LINES
from scoring.metrics.implementation_choice import ImplementationChoiceError
from scoring.metrics.registry import (
    MissingModelError,
    UnknownMetricError,
    checked_run_options,
    compute_metrics,
    compute_system_metric,
    implementation_choice,
    metric_spec,
    metric_specs,
    options_for,
    resolve_implementations,
    split_metric_names,
    system_metric_spec,
)
from scoring.metrics.signature import metric_signature
from scoring.metrics.signature_parameters import chosen_signature_parameters
from scoring.metrics.spec import MetricSpec, VectorsChoice
from scoring.metrics.system_specs import ContextOutputs
from scoring.metrics.tokenize import SUPPORTED_LANGUAGES, TOKENIZERS
from scoring.models import TrainedModel
from scoring.services.word_vectors import WordVectorsError, word_vectors_record
from scoring.trained_model_services import missing_models_text, run_model_paths, run_model_record

# The corpus statistic each sentence-level metric's family defines, by implementation (system-level spec).
_CORPUS_METRIC = {"bleu-4": "corpus-bleu", "chrf": "corpus-chrf", "chrf++": "corpus-chrf++"}


class FileScoringError(ValueError):
    """Input that cannot be scored; the message names the file (or field) and line."""


@dataclass(frozen=True)
class TextFile:
    """A named input: ``name`` is what messages call it (a path, or the API field)."""

    name: str
    data: bytes


@dataclass
class FileScores:
    """Sentence-level values (``sentences[metric][i]``, None where undefined), corpus-level values, signatures."""

    lines: int
    sentences: dict[str, list[float | None]] = field(default_factory=dict)
    corpus: dict[str, dict[str, Any]] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)
    implementations: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "signatures": self.signatures,
            "implementations": self.implementations,
            "corpus": self.corpus,
            "sentences": [
                {"line": index + 1, **{name: values[index] for name, values in self.sentences.items()}}
                for index in range(self.lines)
            ],
            "notes": self.notes,
        }


def text_lines(source: TextFile) -> list[str]:
    """The lines of a UTF-8 text file (a final newline ends the last line, it adds none); a clear error for
    bytes that are not UTF-8 (with the line) or an empty file."""
    # a byte order mark is dropped before decoding, so that an error's position counts from the same bytes
    body = source.data.removeprefix(codecs.BOM_UTF8)
    if not body.strip():
        raise FileScoringError(f"{source.name}: the file is empty")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        line = body[: error.start].count(b"\n") + 1
        offset = error.start + len(source.data) - len(body)
        raise FileScoringError(
            f"{source.name}, line {line}: not UTF-8 (byte {body[error.start]:#04x} at offset {offset}); "
            "save the file as UTF-8"
        ) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def context_turns(line: str) -> list[str]:
    """A context line's turns, oldest first: separated by tabs, or by DailyDialog's ``__eou__``."""
    if "\t" in line:
        parts = line.split("\t")
    elif "__eou__" in line:
        parts = line.split("__eou__")
    else:
        parts = [line]
    return [part.strip() for part in parts if part.strip()]


def files_score(
    *,
    hypotheses: TextFile,
    references: Sequence[TextFile] = (),
    contexts: TextFile | None = None,
    metrics: Sequence[str],
    implementation: str = "",
    options: Mapping[str, str] | None = None,
    tokenizer: str = "default",
    language: str = "en",
    models: Sequence[str] = (),
    vectors: str = "",
    max_lines: int | None = None,
) -> FileScores:
    """Score the lines of ``hypotheses`` (see the module docstring); raises :class:`FileScoringError`."""
    replies = text_lines(hypotheses)
    if max_lines is not None and len(replies) > max_lines:
        raise FileScoringError(
            f"{hypotheses.name}: {len(replies)} lines; at most {max_lines} are scored here"
        )
    reference_columns = []
    for source in references:
        column = text_lines(source)
        if len(column) != len(replies):
            raise FileScoringError(
                f"{source.name} has {len(column)} lines but {hypotheses.name} has {len(replies)}: "
                "each reference file gives one reference per reply, on the same line"
            )
        reference_columns.append(column)
    turns: list[list[str]] = [[] for _ in replies]
    if contexts is not None:
        context_lines = text_lines(contexts)
        if len(context_lines) != len(replies):
            raise FileScoringError(
                f"{contexts.name} has {len(context_lines)} lines but {hypotheses.name} has {len(replies)}: "
                "one context per reply, on the same line"
            )
        turns = [context_turns(line) for line in context_lines]
    item_references = [
        [column[index].strip() for column in reference_columns if column[index].strip()]
        for index in range(len(replies))
    ]
    return texts_score(
        replies=replies,
        references=item_references,
        contexts=turns,
        metrics=metrics,
        implementation=implementation,
        options=options,
        tokenizer=tokenizer,
        language=language,
        models=models,
        vectors=vectors,
    )


def texts_score(
    *,
    replies: Sequence[str],
    references: Sequence[Sequence[str]],
    contexts: Sequence[Sequence[str]],
    metrics: Sequence[str],
    implementation: str = "",
    options: Mapping[str, str] | None = None,
    tokenizer: str = "default",
    language: str = "en",
    models: Sequence[str] = (),
    vectors: str = "",
) -> FileScores:
    """The scores of ``replies[i]`` against ``references[i]`` after the turns ``contexts[i]``."""
    names = _checked_names(metrics, tokenizer=tokenizer, language=language)
    try:
        response_names, system_names = split_metric_names(names)
        choice = implementation_choice(implementation)
        chosen = resolve_implementations(names, choice)
        checked = checked_run_options(names, chosen, options or {})
    except (UnknownMetricError, ImplementationChoiceError) as error:
        raise FileScoringError(str(error)) from None
    specs = metric_specs(response_names)
    required = [name for spec in specs for name in spec.requires if name not in response_names]
    compute_names = [*required, *response_names]
    chosen = {**resolve_implementations(required, choice), **chosen}
    model_records = _models(specs + metric_specs(required), models)
    chosen_vectors = _vectors(vectors, language)
    if not any(contexts):
        # Without contexts no line can be known to answer the same context as another: CIDEr-D's document
        # frequencies count every line, as pycocoevalcap does on a file (scoring/metrics/cider_specs.py).
        checked = {**checked, "df": checked.get("df", DF_LINES)} if CIDER_D_NAME in names else checked
    several = any(len(refs) > 1 for refs in references)
    references_mode = "multi" if several else "single"
    scores = FileScores(lines=len(replies))
    has_refs = [index for index, refs in enumerate(references) if refs]
    for spec in metric_specs(compute_names):
        indices = has_refs if spec.needs_references else list(range(len(replies)))
        if spec.needs_references and len(indices) < len(replies):
            scores.notes.append(
                f"{spec.name}: {len(replies) - len(indices)} line(s) have no reference: no value"
            )
        values: list[float | None] = [None] * len(replies)
        if indices:
            computed = _compute(
                spec.name, indices, replies, references, contexts, language, tokenizer, chosen, checked,
                model_records, chosen_vectors,
            )  # fmt: skip
            for index, value in zip(indices, computed, strict=True):
                values[index] = value if value is None or math.isfinite(value) else None
        scores.sentences[spec.name] = values
        scores.signatures[spec.name] = _file_signature(
            spec, language, references_mode, tokenizer, chosen, checked, model_records, chosen_vectors
        )
        scores.implementations[spec.name] = chosen.get(spec.name, "") or "dialeval"
        scores.corpus[spec.name] = _sentence_mean(values, scores.signatures[spec.name])
        corpus_metric = _CORPUS_METRIC.get(spec.name)
        if corpus_metric and has_refs:
            scores.corpus[spec.name] = _corpus_value(
                corpus_metric, has_refs, replies, references, language, tokenizer, chosen.get(spec.name, ""),
                checked, references_mode,
            )  # fmt: skip
    for name in system_names:
        scores.corpus[name] = _corpus_value(
            name, has_refs if system_metric_spec(name).needs_references else list(range(len(replies))),
            replies, references, language, tokenizer, chosen.get(name, ""), checked, references_mode,
        )  # fmt: skip
        scores.signatures[name] = scores.corpus[name]["signature"]
        scores.implementations[name] = chosen.get(name, "") or "dialeval"
    for name in required:  # components computed for a blend, not asked for
        scores.sentences.pop(name, None)
        scores.corpus.pop(name, None)
        scores.signatures.pop(name, None)
        scores.implementations.pop(name, None)
    return scores


def _checked_names(metrics: Sequence[str], *, tokenizer: str, language: str) -> list[str]:
    """The metric names asked for, each once, after the tokenizer and the language were checked."""
    if tokenizer not in TOKENIZERS:
        raise FileScoringError(f"tokenizer: {tokenizer!r} is not one of {', '.join(TOKENIZERS)}")
    if language not in SUPPORTED_LANGUAGES:
        raise FileScoringError(f"language: {language!r} is not one of {', '.join(SUPPORTED_LANGUAGES)}")
    names = list(dict.fromkeys(name.strip() for name in metrics if name.strip()))
    if not names:
        raise FileScoringError("metrics: name at least one metric (manage.py list_metrics)")
    return names


def _file_signature(
    spec: MetricSpec,
    language: str,
    references_mode: str,
    tokenizer: str,
    chosen: Mapping[str, str],
    checked: Mapping[str, str],
    model_records: Mapping[str, Mapping[str, object]],
    chosen_vectors: VectorsChoice | None,
) -> str:
    """The signature of ``spec``'s sentence values, as a scoring run of the same choices writes it."""
    parameters, _ = chosen_signature_parameters(
        spec.name,
        language=language,
        references=references_mode,
        tokenizer=tokenizer,
        implementation=chosen.get(spec.name, ""),
        options=checked,
        model_hash=str(model_records[spec.model_kind]["hash"]) if spec.model_kind else "",
        vectors=chosen_vectors,
    )
    return metric_signature(spec.name, parameters)


def _sentence_mean(values: Sequence[float | None], signature: str) -> dict[str, Any]:
    """The corpus entry of a metric without a corpus form: the mean of its defined sentence values."""
    defined = [value for value in values if value is not None]
    return {
        "value": sum(defined) / len(defined) if defined else None,
        "statistic": "mean of the sentence values",
        "n": len(defined),
        "signature": signature,
    }


def _compute(
    name: str,
    indices: Sequence[int],
    replies: Sequence[str],
    references: Sequence[Sequence[str]],
    contexts: Sequence[Sequence[str]],
    language: str,
    tokenizer: str,
    chosen: Mapping[str, str],
    options: Mapping[str, str],
    model_records: Mapping[str, Mapping[str, Any]],
    vectors: VectorsChoice | None,
) -> list[float | None]:
    spec = metric_spec(name)
    item_contexts = [list(contexts[index]) if contexts[index] else [""] for index in indices]
    try:
        result = compute_metrics(
            [name],
            [replies[index] for index in indices],
            [list(references[index]) for index in indices],
            [turns[-1] for turns in item_contexts],
            language,
            params=options_for(name, chosen.get(name, ""), options),
            models=run_model_paths(
                {kind: model_records[kind] for kind in model_records if kind == spec.model_kind}
            ),
            tokenizer=tokenizer,
            contexts=item_contexts,
            implementations={name: chosen[name]} if name in chosen else {},
            vectors=vectors,
        )
    except MissingModelError as error:
        raise FileScoringError(str(error)) from None
    return result[name]


def _corpus_value(
    name: str,
    indices: Sequence[int],
    replies: Sequence[str],
    references: Sequence[Sequence[str]],
    language: str,
    tokenizer: str,
    implementation: str,
    options: Mapping[str, str],
    references_mode: str,
) -> dict[str, Any]:
    """A system-level metric over the lines as one system (each line its own context)."""
    spec = system_metric_spec(name)
    implementation = implementation if implementation in spec.implementations else ""
    params = options_for(name, implementation, options)
    score = compute_system_metric(
        name,
        [ContextOutputs([replies[index]], list(references[index])) for index in indices],
        language,
        params,
        tokenizer=tokenizer,
        implementation=implementation,
    )
    parameters = spec.signature_parameters(
        language=language,
        references=references_mode,
        tokenizer=tokenizer,
        implementation=implementation,
        params=params,
    )
    return {
        "value": score.value,
        "statistic": name,
        "n": score.items,
        "signature": metric_signature(name, parameters),
    }


def _models(specs: Sequence[Any], names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The trained model of each kind the learned metrics need: one named, else the default of its kind."""
    kinds = list(dict.fromkeys(spec.model_kind for spec in specs if spec.model_kind))
    named: dict[str, TrainedModel] = {}
    for name in names:
        model = TrainedModel.objects.filter(name=name).first()
        if model is None:
            known = ", ".join(TrainedModel.objects.values_list("name", flat=True)) or "none yet"
            raise FileScoringError(f"model: no trained model named {name!r} (trained models: {known})")
        named[model.kind] = model
    records = {}
    missing = []
    for kind in kinds:
        model = named.get(kind) or TrainedModel.objects.filter(kind=kind, is_default=True).first()
        if model is None:
            missing.append(kind)
        else:
            records[kind] = run_model_record(model)
    if missing:
        each = "one" if len(missing) == 1 else "one of each kind"
        raise FileScoringError(
            f"{missing_models_text(missing)}: name {each} (--model) or make {each} the default "
            "(manage.py train_metric ... --default)."
        )
    return records


def _vectors(name: str, language: str) -> VectorsChoice | None:
    if not name:
        return None
    try:
        record = word_vectors_record(name)
    except WordVectorsError as error:
        raise FileScoringError(f"vectors: {error}") from None
    if record.get("language") and record["language"] != language:
        raise FileScoringError(f"vectors: {name} are {record['language']!r} vectors, not {language!r}")
    return VectorsChoice(
        name=str(record["name"]), folder=str(record.get("path", "")), content_hash=str(record["hash"])
    )
