"""chrF and chrF++ (Popović, 2015, 2017), sentence level, as sacrebleu computes them: the sacrebleu implementation.

Character n-gram F-score (n = 1..6, beta = 2, recall weighted) and, for chrF++, word uni- and bigrams as
well, per reply against its references (sacrebleu keeps the best-matching reference). The values are
sacrebleu's, divided by 100 (0..1 like every other overlap score here). Corpus-level chrF per system is the
system-level metric ``corpus-chrf`` (:mod:`scoring.metrics.system_specs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.metrics import METRICS_VERSION
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.sacrebleu_metrics import sacrebleu_sentence_chrf_batch, sacrebleu_version
from scoring.metrics.spec import MetricFamily, MetricImplementation, MetricSpec, family_member_compute

CHRF_FAMILY_NAME = "chrf"
_WORD_ORDER = {"chrf": 0, "chrf++": 2}


def chrf_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """sacrebleu's sentence chrF / chrF++ for the names asked (0..1)."""
    lowercase = params.get("case", "mixed") == "lc"
    return {
        name: sacrebleu_sentence_chrf_batch(
            inputs.hypotheses, inputs.references, word_order=_WORD_ORDER[name], lowercase=lowercase
        )
        for name in names
    }


def chrf_specs() -> tuple[MetricFamily, list[MetricSpec]]:
    family = MetricFamily(name=CHRF_FAMILY_NAME, compute=chrf_family_compute)
    version = f"{METRICS_VERSION}+sacrebleu-{sacrebleu_version()}"
    specs = []
    for name, word_order in _WORD_ORDER.items():
        parameters = {"nc": "6", "nw": str(word_order), "beta": "2", "case": "mixed", "refagg": "max"}
        implementation = MetricImplementation(
            name="sacrebleu",
            compute=family_member_compute(chrf_family_compute, name),
            version=version,
            description="sacrebleu's sentence chrF" + ("++" if word_order else ""),
            parameters=parameters,
            choices={"case": ("mixed", "lc")},
            own_tokenizer=True,
        )
        specs.append(
            MetricSpec(
                name=name,
                description=f"sentence chrF{'++' if word_order else ''} (Popović): character 1-6-gram "
                + ("and word 1-2-gram " if word_order else "")
                + "F-score, beta 2, as sacrebleu computes it (0..1)",
                needs_references=True,
                version=version,
                compute=implementation.compute,
                family=CHRF_FAMILY_NAME,
                parameters=parameters,
                implementations={"sacrebleu": implementation},
            )
        )
    return family, specs
