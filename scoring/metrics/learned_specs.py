"""The registry's specs of the learned metrics: RUBER (Tao et al., 2018) and BERT-RUBER's unreferenced scorers
and blends (Ghazarian et al., 2019), each computed with a trained model passed in as the ``model`` parameter.

- ``ruber-referenced``: s_R, the pooled cosine of reply and reference word2vec vectors (Tao et al., 2018, eqs. 1-2),
  max over references (Gupta et al., 2019, eq. 1); no value (``None``) for a reply without a known word.
- ``vector-pool-unreferenced``: the same cosine between query and reply (Tao et al., 2018, Table 2 "Vector pool").
- ``ruber-unreferenced``: the neural s_U (Tao et al., 2018, section 3.2).
- ``ruber-min`` / ``-max`` / ``-gmean`` / ``-amean``: min-max normalisation over the scored set (eq. 4) and
  the four blends (section 3.3); whole-set metrics, stored with their raw components so that they can be
  recomputed.
- ``bert-ruber-unreferenced``: the default factorial cell (bert-max-ce, the paper's best, Table 3);
  ``bert-ruber-unreferenced:<embedding>-<representation>-<objective>`` every cell of the factorial
  (embedding word2vec|bert x representation rnn|max|mean x objective ranking|ce).
- ``bert-ruber-min`` / ``-max`` / ``-gmean`` / ``-amean``: the blends of ``bert-ruber-referenced`` and
  ``bert-ruber-unreferenced`` (Ghazarian et al., 2019, section 5, RUBER's combinations over BERT-based scores).

Models are imported and loaded inside the compute functions (cached per process), so that importing the
registry imports neither torch nor gensim.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from scoring.metrics.bert_ruber_referenced import (
    BERT_RUBER_REFERENCED,
    DEFAULT_ENCODER,
    bert_ruber_referenced_compute,
)
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.ruber.blends import BLENDS, ruber_blends
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    MODEL_PARAMETER,
    NO_VECTOR,
    MetricFamily,
    MetricSpec,
    family_member_compute,
    reference_aggregation,
)

# the model kinds the specs name (MetricSpec.model_kind); which kinds train on dialogs, and which are
# trained by default, their trainers declare (scoring.trainers, one module per kind)
RUBER_KIND = "ruber"
BERT_RUBER_KIND = "bert-ruber"
MAUDE_KIND = "maude"  # its specs: scoring.metrics.maude_specs
CROSS_RUBER_KIND = "cross-ruber"  # its specs: scoring.metrics.cross_ruber_specs

LEARNED_VERSION = "1.0.0"

RUBER_REFERENCED = "ruber-referenced"
VECTOR_POOL_UNREFERENCED = "vector-pool-unreferenced"
RUBER_UNREFERENCED = "ruber-unreferenced"
BERT_RUBER_UNREFERENCED = "bert-ruber-unreferenced"

CELL_EMBEDDINGS = ("word2vec", "bert")
CELL_REPRESENTATIONS = ("rnn", "max", "mean")
CELL_OBJECTIVES = ("ranking", "ce")
FACTORIAL_CELLS = tuple(
    "-".join(parts) for parts in itertools.product(CELL_EMBEDDINGS, CELL_REPRESENTATIONS, CELL_OBJECTIVES)
)
DEFAULT_CELL = "bert-max-ce"  # Ghazarian et al. (2019), Table 3: BERT embeddings, max pooling, cross-entropy

BLEND_DESCRIPTIONS = {
    "min": "minimum",
    "max": "maximum",
    "gmean": "geometric mean",
    "amean": "arithmetic mean",
}

SpecGroup = tuple[MetricFamily | None, list[MetricSpec]]


def ruber_specs() -> list[SpecGroup]:
    """RUBER's scores (standalone specs) and its blends (one family: s_R and s_U computed once)."""
    scores = [
        MetricSpec(
            name=RUBER_REFERENCED,
            description="RUBER referenced score s_R (Tao et al., 2018, eqs. 1-2): cosine of the [max; min] "
            "pooled word2vec vectors of reply and reference, max over references",
            needs_references=True,
            version=LEARNED_VERSION,
            compute=_ruber_referenced,
            parameters={"refagg": DEFAULT_REFERENCE_AGGREGATION},
            model_kind=RUBER_KIND,
            undefined_when=NO_VECTOR,
        ),
        MetricSpec(
            name=VECTOR_POOL_UNREFERENCED,
            description="Vector pool (Tao et al., 2018, Table 2): the s_R cosine between query and reply",
            needs_references=False,
            version=LEARNED_VERSION,
            compute=_vector_pool_unreferenced,
            model_kind=RUBER_KIND,
            undefined_when="the reply or the query has no word with a vector",
        ),
        MetricSpec(
            name=RUBER_UNREFERENCED,
            description="RUBER unreferenced score s_U (Tao et al., 2018, section 3.2): Bi-GRU query and reply "
            "vectors, [q; qMr; r], MLP, trained by negative sampling",
            needs_references=False,
            version=LEARNED_VERSION,
            compute=_ruber_unreferenced,
            model_kind=RUBER_KIND,
            prefers_gpu=True,
            one_pass=True,
        ),
    ]
    family = MetricFamily(name="ruber-blends", compute=_ruber_blends)
    blends = [
        blend_spec(
            prefix="ruber",
            method=method,
            family=family,
            components=(RUBER_REFERENCED, RUBER_UNREFERENCED),
            kind=RUBER_KIND,
            parameters={"refagg": DEFAULT_REFERENCE_AGGREGATION},
            uses_tokenizer=True,
        )
        for method in BLENDS
    ]
    return [(None, scores), (family, blends)]


def bert_ruber_specs() -> list[SpecGroup]:
    """BERT-RUBER's unreferenced scorer (default cell and every cell) and its blends."""
    cells = [_bert_cell_spec(BERT_RUBER_UNREFERENCED, DEFAULT_CELL)]
    cells += [_bert_cell_spec(f"{BERT_RUBER_UNREFERENCED}:{cell}", cell) for cell in FACTORIAL_CELLS]
    family = MetricFamily(name="bert-ruber-blends", compute=_bert_ruber_blends)
    blends = [
        blend_spec(
            prefix="bert-ruber",
            method=method,
            family=family,
            components=(BERT_RUBER_REFERENCED, BERT_RUBER_UNREFERENCED),
            kind=BERT_RUBER_KIND,
            parameters={
                "refagg": DEFAULT_REFERENCE_AGGREGATION,
                "encoder": DEFAULT_ENCODER,
                "cell": DEFAULT_CELL,
            },
            uses_tokenizer=False,
        )
        for method in BLENDS
    ]
    return [(None, cells), (family, blends)]


def blend_spec(
    *,
    prefix: str,
    method: str,
    family: MetricFamily,
    components: tuple[str, str],
    kind: str,
    parameters: Mapping[str, str],
    uses_tokenizer: bool,
) -> MetricSpec:
    """A blend of RUBER's family (Tao et al. (2018) §3.3) over ``components`` (s_R, s_U): a whole-set member of
    ``family``, combined by a scoring run from the stored raw components."""
    return MetricSpec(
        name=f"{prefix}-{method}",
        description=f"{prefix.upper()} blend: {BLEND_DESCRIPTIONS[method]} of {components[0]} and "
        f"{components[1]}, each min-max normalised over the scored set (Tao et al., 2018, eq. 4)",
        needs_references=True,
        version=LEARNED_VERSION,
        compute=family_member_compute(family.compute, f"{prefix}-{method}"),
        family=family.name,
        parameters=dict(parameters),
        uses_tokenizer=uses_tokenizer,
        model_kind=kind,
        whole_set=True,
        requires=components,
        combine=partial(_combine_blend, method=method, components=components),
        undefined_when=f"{components[0]} has no value for them: {NO_VECTOR}"
        if prefix == "ruber"
        else f"{components[0]} has no value for them: the reply, or every one of its references, is empty",
    )


def _combine_blend(
    values: Mapping[str, Sequence[float | None]], *, method: str, components: tuple[str, str]
) -> list[float | None]:
    """The blend ``method`` of stored raw s_R and s_U over the whole set (Tao et al., 2018, eq. 4 and section 3.3)."""
    referenced, unreferenced = (values[name] for name in components)
    return ruber_blends(referenced, unreferenced, methods=[method])[method]


def _bert_cell_spec(name: str, cell: str) -> MetricSpec:
    embedding = cell.split("-")[0]
    return MetricSpec(
        name=name,
        description=f"BERT-RUBER unreferenced score, factorial cell {cell} (Ghazarian et al., 2019, "
        "section 2.1, Table 3): embedding-representation-objective, MLP 256/512/128 tanh",
        needs_references=False,
        version=LEARNED_VERSION,
        compute=partial(_bert_ruber_unreferenced, cell=cell),
        parameters={"cell": cell, "encoder": DEFAULT_ENCODER} if embedding == "bert" else {"cell": cell},
        uses_tokenizer=embedding == "word2vec",  # BERT cells use the encoder's own word pieces
        model_kind=BERT_RUBER_KIND,
        prefers_gpu=True,
        one_pass=True,
    )


def _ruber_model(params: Mapping[str, str], language: str) -> Any:
    from scoring.metrics.ruber.artifact import load_ruber

    return trained_model(params, language, load_ruber, "RUBER")


def trained_model(params: Mapping[str, str], language: str, load: Callable[[str], Any], what: str) -> Any:
    """The trained model a learned metric's compute was given (its artifact folder, the parameter
    :data:`MODEL_PARAMETER`), loaded by ``load`` (cached per process by the loaders) and checked to have
    been trained on ``language`` text."""
    model = load(params[MODEL_PARAMETER])
    check_language(model.language, language, what)
    return model


def check_language(model_language: str, language: str, what: str) -> None:
    if model_language != language:
        raise ValueError(
            f"the {what} model was trained on {model_language!r} text and cannot score {language!r} text; "
            f"train one on a {language!r} corpus (manage.py train_metric)"
        )


def _ruber_referenced(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
    reference_aggregation(params, metric=RUBER_REFERENCED)
    result: list[float | None] = _ruber_model(params, inputs.language).referenced(
        inputs.hypotheses, inputs.references
    )
    return result


def _vector_pool_unreferenced(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
    result: list[float | None] = _ruber_model(params, inputs.language).vector_pool_unreferenced(
        inputs.queries, inputs.hypotheses
    )
    return result


def _ruber_unreferenced(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
    return list(_ruber_model(params, inputs.language).unreferenced(inputs.queries, inputs.hypotheses))


def _ruber_blends(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float | None]]:
    referenced = _ruber_referenced(inputs, params)
    unreferenced = _ruber_unreferenced(inputs, params)
    return _named_blends(names, "ruber", referenced, unreferenced)


def _bert_ruber_model(params: Mapping[str, str], language: str) -> Any:
    from scoring.metrics.bert_ruber import load_bert_ruber

    return trained_model(params, language, load_bert_ruber, "BERT-RUBER")


def _bert_ruber_unreferenced(
    inputs: MetricInputs, params: Mapping[str, str], *, cell: str
) -> list[float | None]:
    if params.get("cell", cell) != cell:
        raise ValueError(f"this metric is cell {cell}; name the cell in the metric instead of a parameter")
    model = _bert_ruber_model(params, inputs.language)
    return list(model.unreferenced(inputs.queries, inputs.hypotheses, cell=cell))


def _bert_ruber_blends(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float | None]]:
    cell = params.get("cell", DEFAULT_CELL)
    referenced: list[float | None] = list(
        bert_ruber_referenced_compute(
            inputs,
            {
                "encoder": params.get("encoder", DEFAULT_ENCODER),
                "refagg": params.get("refagg", DEFAULT_REFERENCE_AGGREGATION),
            },
        )
    )
    unreferenced = _bert_ruber_unreferenced(inputs, params, cell=cell)
    return _named_blends(names, "bert-ruber", referenced, unreferenced)


def _named_blends(
    names: Sequence[str],
    prefix: str,
    referenced: Sequence[float | None],
    unreferenced: Sequence[float | None],
) -> dict[str, list[float | None]]:
    methods = [name.removeprefix(f"{prefix}-") for name in names]
    blended = ruber_blends(referenced, unreferenced, methods=methods)
    return {name: blended[method] for name, method in zip(names, methods, strict=True)}
