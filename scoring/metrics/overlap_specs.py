"""ROUGE-L and METEOR as registry metrics: tokenize with the project tokenizer, score against the closest reference.

The two remaining word-overlap metrics of the multi-reference study (seed 003, section 3.3, Table 2;
correlations in Table 4) next to BLEU-1..4. Both combine several references by eq. 1 of section 3.2.1,
the maximum over single-reference scores (parameter ``refagg:max``, the only aggregation offered: nltk's
multi-reference METEOR is that same maximum, and the study defines no other for ROUGE-L). They share no
counting, so they are plain metrics rather than a family.

METEOR's version string carries nltk's version (``0.1.0+nltk-3.10.4``): its values come from nltk's
implementation, and a signature must change when that does.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence

from scoring.metrics import METRICS_VERSION
from scoring.metrics.meteor import meteor_batch
from scoring.metrics.rouge import rouge_l_batch
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    MetricSpec,
    reference_aggregation,
    tokenizer_choice,
)
from scoring.metrics.tokenize import tokenize_all

ROUGE_L_NAME = "rouge-l"
METEOR_NAME = "meteor"


def rouge_l_compute(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    queries: Sequence[str],
    language: str,
    params: Mapping[str, str],
) -> list[float]:
    """ROUGE-L F1 per item against its closest reference (0.0 for items without one)."""
    reference_aggregation(params)
    hypothesis_tokens, reference_tokens = _tokenize_batch(
        hypotheses, references, language, tokenizer_choice(params)
    )
    return rouge_l_batch(hypothesis_tokens, reference_tokens)


def meteor_compute(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    queries: Sequence[str],
    language: str,
    params: Mapping[str, str],
) -> list[float]:
    """nltk METEOR per item against its closest reference; raises MetricDataMissingError without WordNet."""
    reference_aggregation(params)
    hypothesis_tokens, reference_tokens = _tokenize_batch(
        hypotheses, references, language, tokenizer_choice(params)
    )
    return meteor_batch(hypothesis_tokens, reference_tokens)


def meteor_version() -> str:
    """The METEOR spec's version: the metric core's version plus the nltk version that computes it."""
    return f"{METRICS_VERSION}+nltk-{importlib.metadata.version('nltk')}"


def overlap_specs() -> list[MetricSpec]:
    """The ``rouge-l`` and ``meteor`` specs, for :func:`scoring.metrics.registry.register_metric`."""
    parameters = {"refagg": DEFAULT_REFERENCE_AGGREGATION}
    return [
        MetricSpec(
            name=ROUGE_L_NAME,
            description="ROUGE-L (Lin, 2004) as in the multi-reference study (Gupta et al., 2019, Table 2): "
            "F1 of the longest common subsequence of reply and reference, equal to Google's rouge-score "
            "0.1.2 on the same tokens; several references: the best one (seed 003, eq. 1)",
            needs_references=True,
            version=METRICS_VERSION,
            compute=rouge_l_compute,
            parameters=dict(parameters),
        ),
        MetricSpec(
            name=METEOR_NAME,
            description="METEOR (Lavie and Agarwal, 2007) as in the multi-reference study (Gupta et al., "
            "2019, Table 2), computed by nltk's meteor_score: exact, stem and WordNet-synonym alignment, "
            "recall-weighted F-mean with a fragmentation penalty; several references: the best one "
            "(seed 003, eq. 1). Needs NLTK's WordNet corpus (scripts/setup.sh builds it)",
            needs_references=True,
            version=meteor_version(),
            compute=meteor_compute,
            parameters=dict(parameters),
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
