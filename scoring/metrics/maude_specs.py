"""The registry's specs of MaUde (Sinha et al., 2020) and its baselines, each computed with a trained MaUde artifact
passed in as the ``model`` parameter (``manage.py train_metric maude``).

- ``maude``: MaUde over the context's every turn (the paper's setting; ``turns`` = "all");
- ``maude:one-turn``: the same model reading only the last turn (BERT-RUBER's view), so that a report
  shows what the context adds;
- ``maude:bert-nli``, ``maude:infersent``, ``maude:ruber``: the baselines of Sinha et al. (2020), section 4,
  trained in the same artifact with the same NCE loss (where the artifact has them; ``train_metric maude
  --variants``).

All are context-aware (``MetricSpec.reads_context``): a scoring run passes every turn of each context.
The model is loaded inside the compute call (cached per process), so importing the registry imports no
torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from scoring.metrics.bert_ruber_referenced import DEFAULT_ENCODER
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.learned_specs import LEARNED_VERSION, MAUDE_KIND, trained_model
from scoring.metrics.maude.variants import BERT_NLI, DESCRIPTIONS, ENCODER_VARIANTS, INFERSENT, MAUDE, RUBER
from scoring.metrics.spec import MetricSpec

MAUDE_METRIC = "maude"
ALL_TURNS = "all"


def maude_specs() -> list[MetricSpec]:
    specs = [
        _spec(MAUDE_METRIC, MAUDE, ALL_TURNS, DESCRIPTIONS[MAUDE] + "; every context turn"),
        _spec(
            f"{MAUDE_METRIC}:one-turn",
            MAUDE,
            "1",
            DESCRIPTIONS[MAUDE]
            + "; reading only the last context turn (what the context adds: compare with maude)",
        ),
    ]
    specs += [
        _spec(f"{MAUDE_METRIC}:{variant}", variant, ALL_TURNS, DESCRIPTIONS[variant])
        for variant in (BERT_NLI, INFERSENT, RUBER)
    ]
    return specs


def maude_variant(name: str) -> str | None:
    """The trained variant a MaUde metric reads ("maude" for maude and maude:one-turn), else None."""
    base, _, variant = name.partition(":")
    if base != MAUDE_METRIC:
        return None
    return variant if variant in (BERT_NLI, INFERSENT, RUBER) else MAUDE


def _spec(name: str, variant: str, turns: str, description: str) -> MetricSpec:
    parameters = {"turns": turns}
    if variant in ENCODER_VARIANTS:
        parameters["encoder"] = DEFAULT_ENCODER
    return MetricSpec(
        name=name,
        description=description,
        needs_references=False,
        version=LEARNED_VERSION,
        compute=partial(_maude_compute, variant=variant),
        parameters=parameters,
        uses_tokenizer=variant not in ENCODER_VARIANTS,
        model_kind=MAUDE_KIND,
        prefers_gpu=True,
        one_pass=True,
        reads_context=True,
    )


def turns_parameter(value: str) -> int | None:
    """The ``turns`` parameter: "all" (None) or a positive number of last turns."""
    if value == ALL_TURNS:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"turns must be {ALL_TURNS!r} or a positive number, got {value!r}")
    return int(value)


def _maude_compute(inputs: MetricInputs, params: Mapping[str, str], *, variant: str) -> list[float | None]:
    from scoring.metrics.maude import load_maude

    model = trained_model(params, inputs.language, load_maude, "MaUde")
    turns = turns_parameter(params.get("turns", ALL_TURNS))
    return list(model.score(inputs.context_turns, inputs.hypotheses, variant=variant, turns=turns))
