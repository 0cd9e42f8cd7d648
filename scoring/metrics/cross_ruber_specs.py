"""The registry's specs of Cross-RUBER, computed with a trained artifact passed in as the
``model`` parameter (``manage.py train_metric cross-ruber``), in the rows of RUBER's family:

- ``cross-ruber-unreferenced``: s_U(c, r), the fine-tuned cross-encoder's probability that r is the true
  next turn after the context (context-aware: every turn a run has, of which the model reads its last
  ``context_turns``);
- ``cross-ruber-referenced``: s_R(r, refs), the max over the references of the cosine of sentence vectors
  (Tao et al. (2018) eqs. 1-2 with Gupta et al. (2019)'s max; the artifact says which vectors: ``frozen-cosine`` by default);
- ``cross-ruber-min`` / ``-max`` / ``-gmean`` / ``-amean``: RUBER's blends of the two (Tao et al., 2018, eq. 4
  and section 3.3), whole-set metrics a scoring run combines from the stored raw scores.

The model is loaded inside the compute call (cached per process), so importing the registry imports no
torch. docs/metrics.md, "Cross-RUBER", has the equations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring.metrics.cross_ruber.config import (
    BLEND_METRICS,
    CROSS_RUBER,
    CROSS_RUBER_REFERENCED,
    CROSS_RUBER_UNREFERENCED,
)
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.learned_specs import CROSS_RUBER_KIND, LEARNED_VERSION, blend_spec, trained_model
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    MetricFamily,
    MetricSpec,
    reference_aggregation,
)

CROSS_RUBER_BLENDS = "cross-ruber-blends"


def cross_ruber_specs() -> tuple[list[MetricSpec], tuple[MetricFamily, list[MetricSpec]]]:
    """The two scores (standalone specs), and the blends' family with its members."""
    scores = [
        MetricSpec(
            name=CROSS_RUBER_UNREFERENCED,
            description="Cross-RUBER unreferenced score s_U: a MiniLM fine-tuned from dialogs alone in which the "
            "reply's word pieces attend to the context's (last turns), MaUde's head, probability of the true "
            "next turn",
            needs_references=False,
            version=LEARNED_VERSION,
            compute=_unreferenced,
            uses_tokenizer=False,  # the encoder's own word pieces
            model_kind=CROSS_RUBER_KIND,
            prefers_gpu=True,
            reads_context=True,
            one_pass=True,  # a chunk's distinct texts and contexts through the network once, not per slice
        ),
        MetricSpec(
            name=CROSS_RUBER_REFERENCED,
            description="Cross-RUBER referenced score s_R: cosine of the reply's and each reference's sentence "
            "vectors (Tao et al., 2018, eqs. 1-2), max over references",
            needs_references=True,
            version=LEARNED_VERSION,
            compute=_referenced,
            parameters={"refagg": DEFAULT_REFERENCE_AGGREGATION},
            uses_tokenizer=False,
            model_kind=CROSS_RUBER_KIND,
            prefers_gpu=True,
            one_pass=True,
        ),
    ]
    family = MetricFamily(
        name=CROSS_RUBER_BLENDS,
        compute=_blends,
    )
    blends = [
        blend_spec(
            prefix=CROSS_RUBER,
            method=name.removeprefix(f"{CROSS_RUBER}-"),
            family=family,
            components=(CROSS_RUBER_REFERENCED, CROSS_RUBER_UNREFERENCED),
            kind=CROSS_RUBER_KIND,
            parameters={"refagg": DEFAULT_REFERENCE_AGGREGATION},
            uses_tokenizer=False,
        )
        for name in BLEND_METRICS
    ]
    return scores, (family, blends)


def _model(params: Mapping[str, str], language: str) -> Any:
    from scoring.metrics.cross_ruber import load_cross_ruber

    return trained_model(params, language, load_cross_ruber, "Cross-RUBER")


def _unreferenced(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
    return list(_model(params, inputs.language).unreferenced(inputs.context_turns, inputs.hypotheses))


def _referenced(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
    reference_aggregation(params, metric=CROSS_RUBER_REFERENCED)
    return list(_model(params, inputs.language).referenced(inputs.hypotheses, inputs.references))


def _blends(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float | None]]:
    """The blends of one pass of the model, which reads every context turn."""
    reference_aggregation(params, metric=CROSS_RUBER_BLENDS)
    model = _model(params, inputs.language)
    found = model.scores(inputs.hypotheses, inputs.context_turns, inputs.references).blends
    return {name: list(found[name]) for name in names}
