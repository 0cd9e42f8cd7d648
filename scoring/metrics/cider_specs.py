"""CIDEr-D (Vedantam et al., 2015) as nlg-eval computes it: a whole-set metric of the nlg-eval implementation.

nlg-eval reports CIDEr beside BLEU, METEOR and ROUGE-L; its code is coco-caption's CIDEr-D (tf-idf weighted
n-gram cosine, n = 1..4, clipped, with a Gaussian length penalty sigma = 6, averaged over references, times
10; :func:`scoring.metrics.coco.coco_cider_d`). Its idf comes from the document frequencies of n-grams over
the references of every item scored together, so a value depends on the whole set: the metric is
``whole_set`` and a scoring run computes it in one call over every reply of the study.

A study has several systems' replies to one context. nlg-eval is run on one system's output file, where each
context counts once in the document frequencies; here each context counts once as well (the items of one
context, recognised by their last context turn and their references, form one group), so every system's
CIDEr-D equals nlg-eval run on that system's file over the same contexts: parameter ``df:contexts``.

With ``df:lines`` every item is its own document, as pycocoevalcap counts the lines of one file whatever
their text (two lines whose references are the same text are two documents). ``manage.py score_files``
scores a file without a study: with no ``--context`` it cannot tell which lines answer one context, so it
uses ``df:lines`` and equals pycocoevalcap's ``Cider`` on the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scoring.metrics import METRICS_VERSION
from scoring.metrics.coco import coco_cider_d
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.spec import MetricImplementation, MetricSpec

CIDER_D_NAME = "cider-d"
CIDER_VERSION = f"{METRICS_VERSION}+pycocoevalcap-1.2"
# Who counts as a document for the idf: each context of the study once, or each item (line) as pycocoevalcap.
DF_CONTEXTS, DF_LINES = "contexts", "lines"
DF_CONVENTIONS = (DF_CONTEXTS, DF_LINES)
SIGMA = "6"  # the Gaussian length penalty's sigma of CIDEr-D (Vedantam et al., 2015)


def cider_d_compute(inputs: MetricInputs, params: Mapping[str, str]) -> list[float]:
    """CIDEr-D per item, document frequencies counting each context once (``df:contexts``) or each item
    (``df:lines``; see the module docstring), with the length penalty's ``sigma``."""
    stripped = [[text.strip() for text in texts] for texts in inputs.references]
    convention = params.get("df", DF_CONTEXTS)
    if convention not in DF_CONVENTIONS:
        raise ValueError(f"{CIDER_D_NAME}: df={convention!r} is not one of {', '.join(DF_CONVENTIONS)}")
    groups = (
        [(query, tuple(texts)) for query, texts in zip(inputs.queries, stripped, strict=True)]
        if convention == DF_CONTEXTS
        else None
    )
    return coco_cider_d(
        [text.strip() for text in inputs.hypotheses],
        stripped,
        groups=groups,
        sigma=_sigma(params.get("sigma", SIGMA)),
    )


def _sigma(text: str) -> float:
    try:
        sigma = float(text)
    except ValueError:
        sigma = math.nan
    if not sigma > 0 or math.isinf(sigma):
        raise ValueError(f"{CIDER_D_NAME}: sigma={text!r} is not a positive number")
    return sigma


def cider_spec() -> MetricSpec:
    parameters = {"tok": "split", "case": "mixed", "sigma": SIGMA, "df": DF_CONTEXTS, "refagg": "mean"}
    implementation = MetricImplementation(
        name="nlg-eval",
        compute=cider_d_compute,
        version=CIDER_VERSION,
        description="pycocoevalcap's CIDEr-D (sigma 6, clipped tf-idf, x10), idf over the study's contexts",
        parameters=parameters,
        choices={"df": DF_CONVENTIONS},
        own_tokenizer=True,
        whole_set=True,
    )
    return MetricSpec(
        name=CIDER_D_NAME,
        description="CIDEr-D (Vedantam et al., 2015) as nlg-eval computes it: tf-idf weighted n-gram "
        "(1-4) cosine with the references, clipped, length-penalised, averaged over them, times 10; the "
        "idf counts each context of the study once",
        needs_references=True,
        version=CIDER_VERSION,
        compute=cider_d_compute,
        parameters=parameters,
        whole_set=True,
        implementations={"nlg-eval": implementation},
    )
