"""BERT-RUBER's referenced score: RUBER's pooled cosine over contextual token embeddings.

Ghazarian et al. (2019, Ghazarian et al. (2019), section 2.2, Figure 2) keep RUBER's referenced metric (Tao et al.,
2018, Tao et al. (2018), section 3.1, eqs. 1-2: cosine of the [max-pool; min-pool] vectors of reply and
reference) and only replace the word2vec vectors by BERT's contextual ones; here they come from a
:class:`~scoring.metrics.contextual_encoder.TokenEncoder` (all-MiniLM-L6-v2 by default, the only
BERT-family model installable offline). With several references an item scores the maximum over them
(Gupta et al., 2019, section 3.2.1, eq. 1; ``refagg:max``).

Each distinct text of a batch (references are shared by several replies) is encoded and pooled once.
A reply or reference with no word piece (an empty string) has no vector: such a pair scores 0.0 and
each batch with some logs one warning with their count (the registry's compute returns only scores).

The metric runs on CPU (MiniLM encodes a few hundred short sentences per second on 2 cores) and on CUDA
when the worker has it; its spec says ``prefers_gpu=True``: scoring runs send its chunks to the "gpu" queue
when a GPU worker is registered, and to the "cpu" queue otherwise (scoring.services.routing).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from scoring.metrics import METRICS_VERSION
from scoring.metrics.contextual_encoder import (
    MINILM_NAME,
    EncoderUnavailableError,
    TokenEncoder,
    minilm_artifact_hash,
    minilm_encoder,
)
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.pooling import cosine, max_min_pool
from scoring.metrics.spec import DEFAULT_REFERENCE_AGGREGATION, MetricSpec, reference_aggregation

logger = logging.getLogger(__name__)

BERT_RUBER_REFERENCED = "bert-ruber-referenced"
DEFAULT_ENCODER = MINILM_NAME

# name -> (loader, artifact hash known without loading); more encoders are added here.
_ENCODERS: dict[str, tuple[Callable[[], TokenEncoder], Callable[[], str]]] = {
    MINILM_NAME: (minilm_encoder, minilm_artifact_hash),
}


def bert_ruber_referenced_batch(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], encoder: TokenEncoder
) -> list[float]:
    """s_R(reply, references) per item: max over references of the pooled cosine of token vectors.

    Every item needs at least one reference; a side without any token vector scores 0.0 (logged).
    """
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    for index, texts in enumerate(references):
        if not texts:
            raise ValueError(f"item {index} has no reference; {BERT_RUBER_REFERENCED} needs one")
    distinct = list(dict.fromkeys([*hypotheses, *(text for texts in references for text in texts)]))
    pooled: dict[str, NDArray[np.float64] | None] = {
        text: (max_min_pool(tokens) if tokens.shape[0] else None)
        for text, tokens in zip(distinct, encoder.encode_tokens(distinct), strict=True)
    }
    scores = []
    empty = 0
    for hypothesis, texts in zip(hypotheses, references, strict=True):
        reply = pooled[hypothesis]
        candidates = [
            cosine(reply, ref)
            for ref in (pooled[text] for text in texts)
            if reply is not None and ref is not None
        ]
        if not candidates:
            empty += 1
        scores.append(max(candidates, default=0.0))
    if empty:
        logger.warning(
            "%s: %d of %d items have no word piece in the reply or in every reference; scored 0.0",
            BERT_RUBER_REFERENCED,
            empty,
            len(hypotheses),
        )
    return scores


def bert_ruber_referenced_compute(inputs: MetricInputs, params: Mapping[str, str]) -> list[float]:
    """The registry's compute: checks parameters and inputs.language, then :func:`bert_ruber_referenced_batch`."""
    reference_aggregation(params, metric=BERT_RUBER_REFERENCED)
    encoder = verified_encoder(params.get("encoder", DEFAULT_ENCODER), language=inputs.language)
    return bert_ruber_referenced_batch(inputs.hypotheses, inputs.references, encoder)


def verified_encoder(name: str, *, language: str) -> TokenEncoder:
    """The encoder called ``name``, checked against the artifact hash the spec records.

    ValueError for an unknown name or a language the encoder does not cover (all-MiniLM-L6-v2 is
    English uncased: Chinese text would be mostly [UNK]); RuntimeError when its files on disk differ
    from those the package installed.
    """
    if name not in _ENCODERS:
        raise ValueError(f"unknown contextual encoder {name!r}; known: {', '.join(_ENCODERS)}")
    encoder = _loaded_and_checked(name)
    if language != encoder.language:
        raise ValueError(
            f"{BERT_RUBER_REFERENCED} with the {name} encoder scores {encoder.language!r} text only, "
            f"not {language!r} (no BERT-family model for that language is installable offline)"
        )
    return encoder


@functools.cache
def _loaded_and_checked(name: str) -> TokenEncoder:
    load, artifact_hash = _ENCODERS[name]
    encoder = load()
    expected = artifact_hash()
    if encoder.content_hash != expected:
        raise RuntimeError(
            f"the {name} model files hash to {encoder.content_hash}, not to {expected} as installed; "
            "reinstall the package rather than score with altered weights"
        )
    return encoder


def bert_ruber_referenced_spec() -> MetricSpec:
    """The ``bert-ruber-referenced`` spec, for ``register_metric``."""
    try:
        artifact_hash = _ENCODERS[DEFAULT_ENCODER][1]()
    except EncoderUnavailableError:
        # Registration must not break the app when the model package is missing; scoring then fails
        # with the loader's message, so no score is stored under this empty hash.
        artifact_hash = ""
    return MetricSpec(
        name=BERT_RUBER_REFERENCED,
        description="BERT-RUBER referenced score (Ghazarian et al., 2019): cosine of the [max; min] "
        "pooled all-MiniLM-L6-v2 token vectors of reply and reference, max over references",
        needs_references=True,
        version=METRICS_VERSION,
        compute=bert_ruber_referenced_compute,
        parameters={"encoder": DEFAULT_ENCODER, "refagg": DEFAULT_REFERENCE_AGGREGATION},
        uses_tokenizer=False,  # the encoder's own word-piece tokenizer, named by "encoder" and hashed
        prefers_gpu=True,  # see the module docstring
        one_pass=True,
        artifact_hash=artifact_hash,
        undefined_when="the reply, or every one of its references, is empty (no word piece)",
    )
