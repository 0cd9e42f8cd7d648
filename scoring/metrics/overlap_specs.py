"""ROUGE-L and METEOR as registry metrics: tokenize with the project tokenizer, score against the closest reference.

The two remaining word-overlap metrics of the multi-reference study (Gupta et al., 2019, section 3.3, Table 2;
correlations in Table 4) next to BLEU-1..4. Both combine several references by eq. 1 of section 3.2.1,
the maximum over single-reference scores (parameter ``refagg:max``, the only aggregation offered: nltk's
multi-reference METEOR is that same maximum, and the study defines no other for ROUGE-L). They share no
counting, so they are plain metrics rather than a family.

METEOR's version string carries nltk's version (``0.1.0+nltk-3.10.4``): its values come from nltk's
implementation, and a signature must change when that does.

Implementations, each named in the signature (``impl:``):

- ROUGE, the family ``rouge``: ``nltk`` (default; the above: F1 with beta 1 on the project tokenizer, the
  closest reference), ``nlg-eval`` (pycocoevalcap's ROUGE-L: beta 1.2, tokens split on single spaces of
  the stripped text as written, precision and recall each maximised over the references, ``refagg:coco``;
  :mod:`scoring.metrics.coco`) and ``rouge-score`` (Google's rouge-score itself: its tokenizer, which
  lowercases and drops punctuation, optional Porter stemmer ``stem:yes``, the reference with the best F).
  ``rouge-l-precision`` and ``rouge-l-recall`` come with the nlg-eval and rouge-score implementations;
  ROUGE-Lsum (summary-level LCS over newline-separated sentences; a one-line reply scores as ROUGE-L)
  with rouge-score only.
- METEOR: ``nltk`` (default; nltk's port, WordNet synonyms) and ``nlg-eval``: METEOR 1.5 itself (Denkowski
  and Lavie, 2014; the jar pycocoevalcap ships, with its English paraphrase table, ``-norm``), run in one
  long-lived Java process per worker (:mod:`scoring.metrics.meteor15`).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence

from scoring.metrics import METRICS_VERSION
from scoring.metrics.coco import coco_rouge_l_batch
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.meteor import meteor_batch
from scoring.metrics.meteor15 import meteor15_batch, meteor15_version
from scoring.metrics.rouge import rouge_l_batch
from scoring.metrics.rouge_score_metrics import rouge_score_batch, rouge_score_version
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    MetricFamily,
    MetricImplementation,
    MetricSpec,
    family_member_compute,
    reference_aggregation,
    tokenizer_choice,
)
from scoring.metrics.tokenize import tokenize_all

ROUGE_FAMILY_NAME = "rouge"
ROUGE_L_NAME = "rouge-l"
METEOR_NAME = "meteor"
COCO_VERSION = f"{METRICS_VERSION}+pycocoevalcap-1.2"
# name -> (rouge-score's type, which of precision / recall / F)
_ROUGE_MEMBERS = {
    ROUGE_L_NAME: ("rougeL", 2),
    "rouge-l-precision": ("rougeL", 0),
    "rouge-l-recall": ("rougeL", 1),
    "rouge-lsum": ("rougeLsum", 2),
    "rouge-lsum-precision": ("rougeLsum", 0),
    "rouge-lsum-recall": ("rougeLsum", 1),
}


def rouge_l_compute(inputs: MetricInputs, params: Mapping[str, str]) -> list[float]:
    """ROUGE-L F1 per item against its closest reference (0.0 for items without one)."""
    reference_aggregation(params)
    hypothesis_tokens, reference_tokens = _tokenize_batch(
        inputs.hypotheses, inputs.references, inputs.language, tokenizer_choice(params)
    )
    return rouge_l_batch(hypothesis_tokens, reference_tokens)


def rouge_nltk_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """The nltk implementation of the family: ROUGE-L F1 only (its sole member)."""
    return {name: rouge_l_compute(inputs, params) for name in names}


def rouge_coco_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """nlg-eval's ROUGE-L (pycocoevalcap, beta 1.2) precision, recall and F of the stripped texts."""
    rows = coco_rouge_l_batch(
        [text.strip() for text in inputs.hypotheses],
        [[text.strip() for text in texts] for texts in inputs.references],
        beta=float(params.get("beta", "1.2")),
    )
    return {name: [row[_ROUGE_MEMBERS[name][1]] for row in rows] for name in names}


def rouge_score_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """Google's rouge-score for the members in ``names`` (ROUGE-L and ROUGE-Lsum; P, R or F)."""
    types = sorted({_ROUGE_MEMBERS[name][0] for name in names})
    scores = rouge_score_batch(
        inputs.hypotheses, inputs.references, types, use_stemmer=params.get("stem", "no") == "yes"
    )
    return {name: [row[_ROUGE_MEMBERS[name][1]] for row in scores[_ROUGE_MEMBERS[name][0]]] for name in names}


def meteor15_compute(inputs: MetricInputs, params: Mapping[str, str]) -> list[float]:
    """METEOR 1.5 as nlg-eval runs it (the jar takes the best of every reference itself)."""
    return meteor15_batch(
        [text.strip() for text in inputs.hypotheses], [[t.strip() for t in ts] for ts in inputs.references]
    )


def meteor_compute(inputs: MetricInputs, params: Mapping[str, str]) -> list[float]:
    """nltk METEOR per item against its closest reference; raises MetricDataMissingError without WordNet."""
    reference_aggregation(params)
    hypothesis_tokens, reference_tokens = _tokenize_batch(
        inputs.hypotheses, inputs.references, inputs.language, tokenizer_choice(params)
    )
    return meteor_batch(hypothesis_tokens, reference_tokens)


def meteor_version() -> str:
    """The METEOR spec's version: the metric core's version plus the nltk version that computes it."""
    return f"{METRICS_VERSION}+nltk-{importlib.metadata.version('nltk')}"


def rouge_specs() -> tuple[MetricFamily, list[MetricSpec]]:
    """The ROUGE family (ROUGE-L, its precision and recall, ROUGE-Lsum), for ``register_metric_family``."""
    family = MetricFamily(
        name=ROUGE_FAMILY_NAME,
        compute=rouge_nltk_family_compute,
        implementations={"nlg-eval": rouge_coco_family_compute, "rouge-score": rouge_score_family_compute},
    )

    def implementations(name: str) -> dict[str, MetricImplementation]:
        """nltk's (ROUGE-L F only), nlg-eval's (ROUGE-L), rouge-score's; the default first: nltk where it
        has the metric, else rouge-score (the one tool that has every member)."""
        offered: dict[str, MetricImplementation] = {}
        if name == ROUGE_L_NAME:
            offered["nltk"] = MetricImplementation(
                name="nltk",
                compute=family_member_compute(rouge_nltk_family_compute, name),
                version=METRICS_VERSION,
                description="F1 (beta 1) of the LCS on the project tokenizer, the best reference",
                parameters={"beta": "1", "refagg": DEFAULT_REFERENCE_AGGREGATION},
            )
        if _ROUGE_MEMBERS[name][0] == "rougeL":
            offered["nlg-eval"] = MetricImplementation(
                name="nlg-eval",
                compute=family_member_compute(rouge_coco_family_compute, name),
                version=COCO_VERSION,
                description="pycocoevalcap's ROUGE-L: beta 1.2, single-space tokens, max P and max R",
                parameters={"tok": "space", "case": "mixed", "beta": "1.2", "refagg": "coco"},
                own_tokenizer=True,
            )
        offered["rouge-score"] = MetricImplementation(
            name="rouge-score",
            compute=family_member_compute(rouge_score_family_compute, name),
            version=f"{METRICS_VERSION}+rouge-score-{rouge_score_version()}",
            description="Google's rouge-score: its tokenizer, optional Porter stemmer, the best reference",
            parameters={"tok": "rouge-score", "case": "lc", "stem": "no", "beta": "1", "refagg": "max"},
            choices={"stem": ("no", "yes")},
            own_tokenizer=True,
        )
        default = "nltk" if "nltk" in offered else "rouge-score"
        return {default: offered[default], **{key: value for key, value in offered.items() if key != default}}

    what = {0: "precision", 1: "recall", 2: "F-measure"}
    specs = []
    for name, (kind, part) in _ROUGE_MEMBERS.items():
        offered = implementations(name)
        default = next(iter(offered.values()))
        summary = (
            "ROUGE-Lsum (LCS over the reply's newline-separated sentences)"
            if kind == "rougeLsum"
            else "ROUGE-L"
        )
        specs.append(
            MetricSpec(
                name=name,
                description=f"{summary} {what[part]} (Lin, 2004): the longest common subsequence of reply and "
                "reference"
                + (
                    " as in the multi-reference study (Gupta et al., 2019, Table 2), F1 equal to rouge-score "
                    "0.1.2 on the same tokens; several references: the best one (Gupta et al., 2019, eq. 1)"
                    if name == ROUGE_L_NAME
                    else ""
                ),
                needs_references=True,
                version=default.version,
                compute=default.compute,
                family=ROUGE_FAMILY_NAME,
                parameters=dict(default.parameters),
                implementations=offered,
            )
        )
    return family, specs


def overlap_specs() -> list[MetricSpec]:
    """The ``meteor`` spec, for :func:`scoring.metrics.registry.register_metric` (ROUGE: :func:`rouge_specs`)."""
    parameters = {"refagg": DEFAULT_REFERENCE_AGGREGATION}
    return [
        MetricSpec(
            name=METEOR_NAME,
            description="METEOR (Lavie and Agarwal, 2007) as in the multi-reference study (Gupta et al., "
            "2019, Table 2), computed by nltk's meteor_score: exact, stem and WordNet-synonym alignment, "
            "recall-weighted F-mean with a fragmentation penalty; several references: the best one "
            "(Gupta et al., 2019, eq. 1). Needs NLTK's WordNet corpus (scripts/setup.sh builds it)",
            needs_references=True,
            version=meteor_version(),
            compute=meteor_compute,
            parameters=dict(parameters),
            implementations={
                "nltk": MetricImplementation(
                    name="nltk",
                    compute=meteor_compute,
                    version=meteor_version(),
                    description="nltk's meteor_score (WordNet synonyms) on the project tokenizer",
                    parameters=dict(parameters),
                ),
                "nlg-eval": MetricImplementation(
                    name="nlg-eval",
                    compute=meteor15_compute,
                    version=f"{METRICS_VERSION}+{meteor15_version()}",
                    description="METEOR 1.5 (the jar pycocoevalcap ships, -norm, English paraphrases)",
                    parameters={"tok": "meteor-norm", "case": "lc", "refagg": "max"},
                    own_tokenizer=True,
                ),
            },
        ),
    ]


def _tokenize_batch(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], language: str, tokenizer: str
) -> tuple[list[list[str]], list[list[list[str]]]]:
    """Tokens of every reply and reference; a reference text met again is the same token list.

    Sharing the list object lets :func:`rouge_l_batch` build a reference's position masks once for all
    the systems answering one context.
    """
    distinct = list(dict.fromkeys(text for texts in references for text in texts))
    tokens_by_text = dict(zip(distinct, tokenize_all(distinct, language, tokenizer), strict=True))
    hypothesis_tokens = tokenize_all(hypotheses, language, tokenizer)
    reference_tokens = [[tokens_by_text[text] for text in texts] for texts in references]
    return hypothesis_tokens, reference_tokens
