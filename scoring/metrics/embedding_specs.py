"""Embedding Average, Vector Extrema and Greedy Matching as one registry family over GloVe 6B 50d.

The embedding-based metrics of the multi-reference study (Gupta et al., 2019, section 3.3, Table 2; the maths is
in :mod:`scoring.metrics.embedding`). The family tokenizes each reply and reference once and looks
each distinct sentence up once for all three metrics. Several references: the maximum over them
(Gupta et al., 2019, section 3.2.1, eq. 1; ``refagg:max``, the only aggregation these metrics have).

Artifact hash: every spec records ``glove_6b_50d_artifact_hash()``, the vectors' content hash (sha256
over the sha256 digests of the package's ``.npy`` matrix and parquet word index). It is known at
registration without loading or hashing 84 MB, because it is built from the digests pip wrote into
the installed package's RECORD; the first scoring call in a process hashes the files themselves and
refuses to score if they no longer match, so a signature never names vectors other than those used.
A package name and version alone would not notice a rebuilt or altered wheel.

Other vectors: a run may choose word vectors a researcher registered (GloVe 300d, GoogleNews word2vec ...;
:mod:`scoring.metrics.vector_files`). The compute then receives the store folder and content hash as the
parameters :data:`VECTOR_STORE_PARAMETER` and :data:`VECTOR_HASH_PARAMETER`; the signature records the
vectors' name (``vectors:``) and their hash as the artifact.

Implementations: ``nltk`` (default) tokenizes with the project tokenizer chosen for the run
(which lowercases, as GloVe's vocabulary is) and skips unknown words (``oov:skip``; ``oov:mean`` gives
them the mean vector); ``nlg-eval`` scores as nlg-eval's ``eval_emb_metrics``: nltk's word tokenizer on
the text as written (``tok:nltk-word``, ``case:mixed``: a capitalised word is unknown to GloVe), unknown
words mapped to the mean of all vectors (``oov:mean``), its Vector Extrema rule, the best reference. nltk's
``word_tokenize`` splits sentences with the trained Punkt model, which no package here ships; the
sentences are split by nltk's Punkt algorithm without a trained model, which differs only at
abbreviations ("Mr." becomes "Mr" "."), and the signature says so (``tok:nltk-word``, docs/metrics.md).

Replies or references with no in-vocabulary word score 0.0 (see :mod:`scoring.metrics.embedding`);
the registry's compute returns only scores, so each batch with such items logs one warning with
their count on the ``scoring.metrics.embedding_specs`` logger (a child of ``scoring.metrics``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.metrics import METRICS_VERSION
from scoring.metrics.embedding import (
    EMBEDDING_AVERAGE,
    EMBEDDING_METRICS,
    GREEDY_MATCHING,
    OOV_RULES,
    VECTOR_EXTREMA,
    embedding_scores_batch,
)
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    NO_VECTOR,
    VECTOR_HASH_PARAMETER,
    VECTOR_STORE_PARAMETER,
    MetricFamily,
    MetricImplementation,
    MetricSpec,
    family_member_compute,
    reference_aggregation,
    tokenizer_choice,
)
from scoring.metrics.tokenize import nltk_word_tokens, tokenize
from scoring.metrics.vector_files import load_vector_store
from scoring.metrics.word_vectors import (
    GLOVE_6B_50D_NAME,
    WordVectors,
    WordVectorsUnavailableError,
    glove_6b_50d,
    glove_6b_50d_artifact_hash,
)

logger = logging.getLogger(__name__)

EMBEDDING_FAMILY_NAME = "embedding"
DEFAULT_VECTORS = GLOVE_6B_50D_NAME
NLG_EVAL_EMBEDDING_VERSION = f"{METRICS_VERSION}+nlg-eval-emb"

_DESCRIPTIONS = {
    EMBEDDING_AVERAGE: "Embedding Average: cosine of the mean GloVe vectors of reply and reference "
    "(out-of-vocabulary words skipped; 0.0 when a side has no known word)",
    VECTOR_EXTREMA: "Vector Extrema (Forgues et al., 2014): cosine of the per-dimension most extreme "
    "GloVe values of reply and reference (0.0 when a side has no known word)",
    GREEDY_MATCHING: "Greedy Matching (Rus and Lintean, 2012): each word matched to its most "
    "cosine-similar word of the other sentence, averaged, mean of both directions (0.0 when a side "
    "has no known word)",
}


@dataclass(frozen=True)
class _NamedVectors:
    language: str  # the language of the vocabulary: other languages would be almost all OOV
    load: Callable[[], WordVectors]
    artifact_hash: Callable[[], str]


_VECTORS = {
    GLOVE_6B_50D_NAME: _NamedVectors(
        language="en", load=glove_6b_50d, artifact_hash=glove_6b_50d_artifact_hash
    ),
}


def embedding_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """``{name: [score per item]}`` for the embedding metrics in ``names``, from one tokenization."""
    tokenizer = tokenizer_choice(params)
    return _embedding_scores(
        names,
        inputs.hypotheses,
        inputs.references,
        inputs.language,
        params,
        lambda text: tokenize(text, inputs.language, tokenizer),
    )


def nlg_eval_embedding_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """The embedding metrics as nlg-eval's ``eval_emb_metrics`` computes them (see the module docstring)."""
    return _embedding_scores(
        names,
        inputs.hypotheses,
        inputs.references,
        inputs.language,
        params,
        lambda text: nltk_word_tokens(text.strip()),
        "nlg-eval",
    )


def _embedding_scores(
    names: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    language: str,
    params: Mapping[str, str],
    split: Callable[[str], list[str]],
    extrema: str = "signed-max",
) -> dict[str, list[float]]:
    reference_aggregation(params, metric="embedding metrics")
    vectors = chosen_vectors(params, language=language)
    tokens_by_text: dict[str, list[str]] = {}

    def tokens(text: str) -> list[str]:
        if text not in tokens_by_text:
            tokens_by_text[text] = split(text)
        return tokens_by_text[text]

    oov = params.get("oov", "skip")
    scores = embedding_scores_batch(
        [tokens(text) for text in hypotheses],
        [[tokens(text) for text in texts] for texts in references],
        vectors,
        metrics=list(names),
        oov=oov,
        extrema=extrema,
    )
    if scores.empty_items:
        logger.warning(
            "%s: %d of %d items have no word with a %s vector in the reply or in every reference; scored 0.0",
            ", ".join(names),
            scores.empty_items,
            len(hypotheses),
            vectors.name,
        )
    return {name: scores.values[name] for name in names}


def chosen_vectors(params: Mapping[str, str], *, language: str) -> WordVectors:
    """The vectors a compute call was given: a registered store (its folder and hash in ``params``), or
    the built-in vectors named by ``params["vectors"]``."""
    store = params.get(VECTOR_STORE_PARAMETER, "")
    if store:
        return load_vector_store(Path(store), params.get(VECTOR_HASH_PARAMETER, ""))
    return verified_vectors(params.get("vectors", DEFAULT_VECTORS), language=language)


def verified_vectors(name: str, *, language: str) -> WordVectors:
    """The vectors called ``name``, checked against the artifact hash their specs record.

    Raises ValueError for an unknown name or a language the vectors do not cover, and RuntimeError
    when the files on disk differ from those the package installed.
    """
    if name not in _VECTORS:
        raise ValueError(f"unknown word vectors {name!r}; known: {', '.join(_VECTORS)}")
    if language != _VECTORS[name].language:
        raise ValueError(
            f"the {name} vectors are {_VECTORS[name].language!r}; they cannot score {language!r} text"
        )
    return _loaded_and_checked(name)


@functools.cache
def _loaded_and_checked(name: str) -> WordVectors:
    named = _VECTORS[name]
    vectors = named.load()
    expected = named.artifact_hash()
    if vectors.content_hash != expected:
        raise RuntimeError(
            f"the {name} vector files hash to {vectors.content_hash}, not to {expected} as installed; "
            "reinstall the package rather than score with altered vectors"
        )
    return vectors


def embedding_specs() -> tuple[MetricFamily, list[MetricSpec]]:
    """The family and the three specs, for ``register_metric_family`` (as ``bleu_specs``)."""
    try:
        artifact_hash = _VECTORS[DEFAULT_VECTORS].artifact_hash()
    except WordVectorsUnavailableError:
        # Registration must not break the app when the vectors package is missing; scoring with these
        # metrics then fails with the loader's message, so no score is stored under this empty hash.
        artifact_hash = ""
    nltk_parameters = {"vectors": DEFAULT_VECTORS, "oov": "skip", "refagg": DEFAULT_REFERENCE_AGGREGATION}
    specs = [
        MetricSpec(
            name=name,
            description=_DESCRIPTIONS[name],
            needs_references=True,
            version=METRICS_VERSION,
            compute=family_member_compute(embedding_family_compute, name),
            family=EMBEDDING_FAMILY_NAME,
            parameters=nltk_parameters,
            artifact_hash=artifact_hash,
            reads_vectors=True,
            implementations={
                "nltk": MetricImplementation(
                    name="nltk",
                    compute=family_member_compute(embedding_family_compute, name),
                    version=METRICS_VERSION,
                    description="the project tokenizer (lowercased), unknown words skipped by default",
                    parameters=nltk_parameters,
                    choices={"oov": OOV_RULES},
                ),
                "nlg-eval": MetricImplementation(
                    name="nlg-eval",
                    compute=family_member_compute(nlg_eval_embedding_family_compute, name),
                    version=NLG_EVAL_EMBEDDING_VERSION,
                    description="nlg-eval's eval_emb_metrics: nltk word tokens as written, unknown words "
                    "as the mean vector",
                    parameters={
                        "vectors": DEFAULT_VECTORS,
                        "tok": "nltk-word",
                        "case": "mixed",
                        "oov": "mean",
                        "refagg": DEFAULT_REFERENCE_AGGREGATION,
                    },
                    choices={"oov": OOV_RULES},
                    own_tokenizer=True,
                ),
            },
            undefined_when=NO_VECTOR,
        )
        for name in EMBEDDING_METRICS
    ]
    family = MetricFamily(
        name=EMBEDDING_FAMILY_NAME,
        compute=embedding_family_compute,
        implementations={"nlg-eval": nlg_eval_embedding_family_compute},
    )
    return family, specs
