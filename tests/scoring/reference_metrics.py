"""The reference implementations the metric tester (:mod:`tests.scoring.metric_tester`) compares the engine with,
each called as the tool it is named after is called, and computed here by that tool itself, never copied:
nltk's BLEU, METEOR and corpus BLEU (Papineni et al., 2002; Banerjee & Lavie, 2005), Google's rouge-score
(Lin, 2004), pycocoevalcap 1.2 as nlg-eval calls it (Sharma et al., 2017: stripped text, one "image" per item),
sacrebleu (Post, 2018), and nlg-eval's embedding metrics re-computed from its ``eval_emb_metrics``
(nlgeval/word2vec/evaluate.py; Liu et al., 2016).

Each ``*_reference`` function returns a :data:`~tests.scoring.metric_tester.Reference`: a callable of a
:class:`~tests.scoring.metric_batches.MetricBatch` giving one value per item, that tokenizes (where the tool
takes tokens) with the tokenizer the engine claims to use, so that both sides score the same tokens. The plain
functions below them (``coco_bleu``, ``coco_cider``, ...) are the same calls on lists, for the tests of the
library functions that the engine does not expose one by one (pycocoevalcap's CIDEr of other orders).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from scoring.metrics.system_specs import ContextOutputs
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, tokenize
from scoring.metrics.word_vectors import WordVectors
from tests.scoring.metric_batches import MetricBatch

BatchValues = Callable[[MetricBatch], list[float | None]]


def _tokens(language: str, tokenizer: str) -> Callable[[str], list[str]]:
    return lambda text: tokenize(text, language, tokenizer)


# --- nltk ----------------------------------------------------------------------------------------------------


def nltk_sentence_bleu(hypothesis: list[str], references: list[list[str]], n: int, smoothing: str) -> float:
    """nltk's ``sentence_bleu`` of order ``n`` (uniform weights), its references used jointly."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # method0 warns about zero n-gram overlaps
        return float(
            sentence_bleu(
                references,
                hypothesis,
                weights=tuple(1 / n for _ in range(n)),
                smoothing_function=getattr(SmoothingFunction(), smoothing),
            )
        )


def nltk_corpus_bleu(
    hypotheses: Sequence[list[str]],
    references: Sequence[list[list[str]]],
    n: int = 4,
    smoothing: str = "method0",
) -> float:
    from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            corpus_bleu(
                list(references),
                list(hypotheses),
                weights=tuple(1 / n for _ in range(n)),
                smoothing_function=getattr(SmoothingFunction(), smoothing),
            )
        )


def nltk_bleu_reference(
    n: int,
    smoothing: str = "method1",
    *,
    refagg: str = "max",
    tokenizer: str = DEFAULT_TOKENIZER,
    language: str = "en",
) -> BatchValues:
    """BLEU-n by nltk on the engine's tokens: the best single-reference score (``refagg:max``) or nltk's
    multi-reference BLEU (``refagg:joint``)."""
    words = _tokens(language, tokenizer)

    def reference(batch: MetricBatch) -> list[float | None]:
        values: list[float | None] = []
        for hypothesis, refs in zip(batch.hypotheses, batch.references, strict=True):
            tokens, ref_tokens = words(hypothesis), [words(ref) for ref in refs]
            if refagg == "joint":
                values.append(nltk_sentence_bleu(tokens, ref_tokens, n, smoothing))
            else:
                values.append(max(nltk_sentence_bleu(tokens, [ref], n, smoothing) for ref in ref_tokens))
        return values

    return reference


def nltk_corpus_bleu_reference(
    n: int = 4, smoothing: str = "method0", *, tokenizer: str = DEFAULT_TOKENIZER, language: str = "en"
) -> Callable[[Sequence[ContextOutputs]], float | None]:
    """nltk's ``corpus_bleu`` (no smoothing) over every output of a system, each against its context's
    references."""
    words = _tokens(language, tokenizer)

    def reference(contexts: Sequence[ContextOutputs]) -> float | None:
        pairs = [(output, context.references) for context in contexts for output in context.outputs]
        return nltk_corpus_bleu(
            [words(output) for output, _ in pairs],
            [[words(ref) for ref in refs] for _, refs in pairs],
            n,
            smoothing,
        )

    return reference


def nltk_self_bleu_reference(
    n: int, smoothing: str = "method1", *, tokenizer: str = DEFAULT_TOKENIZER, language: str = "en"
) -> Callable[[Sequence[ContextOutputs]], float | None]:
    """Self-BLEU-n (Zhu et al., 2018) by nltk: each output of a context against the context's other outputs as
    nltk's references, the mean over the outputs, then over the contexts with two outputs or more (None
    without one)."""
    words = _tokens(language, tokenizer)

    def reference(contexts: Sequence[ContextOutputs]) -> float | None:
        per_context = []
        for context in contexts:
            outputs = [words(output) for output in context.outputs]
            if len(outputs) < 2:
                continue
            per_context.append(
                sum(
                    nltk_sentence_bleu(output, [o for j, o in enumerate(outputs) if j != i], n, smoothing)
                    for i, output in enumerate(outputs)
                )
                / len(outputs)
            )
        return sum(per_context) / len(per_context) if per_context else None

    return reference


def nltk_recall_bleu_reference(
    n: int, smoothing: str = "method1", *, tokenizer: str = DEFAULT_TOKENIZER, language: str = "en"
) -> Callable[[Sequence[ContextOutputs]], float | None]:
    """Recall-BLEU-n (Gupta et al., 2019, eq. 2) by nltk: per context, the mean over its references of the best
    output's single-reference sentence BLEU, then the mean over the contexts with outputs and references."""
    words = _tokens(language, tokenizer)

    def reference(contexts: Sequence[ContextOutputs]) -> float | None:
        per_context = [
            sum(
                max(
                    nltk_sentence_bleu(words(output), [words(ref)], n, smoothing)
                    for output in context.outputs
                )
                for ref in context.references
            )
            / len(context.references)
            for context in contexts
            if context.outputs and context.references
        ]
        return sum(per_context) / len(per_context) if per_context else None

    return reference


def nltk_meteor(wordnet: Any, hypothesis: list[str], references: list[list[str]]) -> float:
    """nltk's ``meteor_score`` of tokens (the best of several references), over ``wordnet``."""
    from nltk.translate.meteor_score import meteor_score

    return float(meteor_score(references, hypothesis, wordnet=wordnet))


def nltk_meteor_reference(
    wordnet: Any, *, tokenizer: str = DEFAULT_TOKENIZER, language: str = "en"
) -> BatchValues:
    """nltk's ``meteor_score`` (the best reference) on the engine's tokens, over ``wordnet``."""
    words = _tokens(language, tokenizer)

    def reference(batch: MetricBatch) -> list[float | None]:
        return [
            nltk_meteor(wordnet, words(hyp), [words(ref) for ref in refs])
            for hyp, refs in zip(batch.hypotheses, batch.references, strict=True)
        ]

    return reference


# --- rouge-score ---------------------------------------------------------------------------------------------


def given_tokens_scorer() -> Any:
    """rouge-score's ROUGE-L scorer handed the tokens it is given (joined by spaces), so both sides score the
    same tokens."""
    from rouge_score.rouge_scorer import RougeScorer
    from rouge_score.tokenizers import Tokenizer

    class GivenTokens(Tokenizer):
        def tokenize(self, text: str) -> list[str]:
            return text.split()

    return RougeScorer(["rougeL"], tokenizer=GivenTokens())


def rouge_score_rouge_l(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
    scorer = _SCORERS.setdefault("given", given_tokens_scorer())
    return float(scorer.score(" ".join(reference), " ".join(hypothesis))["rougeL"].fmeasure)


_SCORERS: dict[str, Any] = {}


def rouge_score_on_tokens_reference(
    *, multi: bool = False, tokenizer: str = DEFAULT_TOKENIZER, language: str = "en"
) -> BatchValues:
    """rouge-score's ROUGE-L F on the engine's tokens: the best reference by the maximum of single scores, or
    by rouge-score's own ``score_multi`` (``multi``), which keeps the reference with the best F."""
    words = _tokens(language, tokenizer)

    def reference(batch: MetricBatch) -> list[float | None]:
        values: list[float | None] = []
        for hypothesis, refs in zip(batch.hypotheses, batch.references, strict=True):
            tokens = words(hypothesis)
            if multi:
                scorer = _SCORERS.setdefault("given", given_tokens_scorer())
                joined = [" ".join(words(ref)) for ref in refs]
                values.append(float(scorer.score_multi(joined, " ".join(tokens))["rougeL"].fmeasure))
            else:
                values.append(max(rouge_score_rouge_l(tokens, words(ref)) for ref in refs))
        return values

    return reference


def rouge_scorer_reference(rouge_type: str, part: str, *, stem: bool = False) -> BatchValues:
    """rouge-score's own ``RougeScorer([...], use_stemmer=stem).score_multi`` on the raw text: ``part`` is
    ``fmeasure``, ``precision`` or ``recall`` of ``rouge_type`` (``rougeL``, ``rougeLsum``)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"], use_stemmer=stem)

    def reference(batch: MetricBatch) -> list[float | None]:
        return [
            float(getattr(scorer.score_multi(list(refs), hyp)[rouge_type], part))
            for hyp, refs in zip(batch.hypotheses, batch.references, strict=True)
        ]

    return reference


# --- pycocoevalcap, called the nlg-eval way ------------------------------------------------------------------


def coco_inputs(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, strip: bool = False
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """pycocoevalcap's layout, one "image" per item; ``strip`` as nlg-eval's ``compute_metrics`` strips."""

    def clean(text: str) -> str:
        return text.strip() if strip else text

    gts = {index: [clean(ref) for ref in refs] for index, refs in enumerate(references)}
    res = {index: [clean(hypothesis)] for index, hypothesis in enumerate(hypotheses)}
    return gts, res


def coco_bleu(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, strip: bool = False
) -> tuple[list[float], list[list[float]]]:
    """(corpus BLEU-1..4, per item [BLEU-1..4]) from ``Bleu(4).compute_score``."""
    from pycocoevalcap.bleu.bleu import Bleu

    corpus, per_order = Bleu(4).compute_score(*coco_inputs(hypotheses, references, strip=strip), verbose=0)
    return [float(value) for value in corpus], [
        [float(per_order[k][i]) for k in range(4)] for i in range(len(hypotheses))
    ]


def coco_rouge(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], beta: float = 1.2, *, strip: bool = False
) -> list[tuple[float, float, float]]:
    """Per item (max precision, max recall, F): F from ``Rouge.calc_score``, P and R from its ``my_lcs``."""
    from pycocoevalcap.rouge.rouge import Rouge, my_lcs

    rouge = Rouge()
    rouge.beta = beta
    gts, res = coco_inputs(hypotheses, references, strip=strip)
    rows = []
    for index in range(len(hypotheses)):
        hypothesis, refs = res[index][0], gts[index]
        candidate = hypothesis.split(" ")
        lcs = [my_lcs(reference.split(" "), candidate) for reference in refs]
        precision = max(value / float(len(candidate)) for value in lcs)
        recall = max(
            value / float(len(reference.split(" "))) for value, reference in zip(lcs, refs, strict=True)
        )
        rows.append((precision, recall, float(rouge.calc_score([hypothesis], list(refs)))))
    return rows


def coco_cider(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    n: int = 4,
    sigma: float = 6.0,
    *,
    strip: bool = False,
) -> list[float]:
    from pycocoevalcap.cider.cider import Cider

    if not hypotheses:
        return []
    _, scores = Cider(n=n, sigma=sigma).compute_score(*coco_inputs(hypotheses, references, strip=strip))
    return [float(score) for score in scores]


def coco_bleu_reference(order: int) -> BatchValues:
    """nlg-eval's BLEU-``order`` of each item: pycocoevalcap's ``Bleu(4)`` per image, option "closest"."""

    def reference(batch: MetricBatch) -> list[float | None]:
        _, per_item = coco_bleu(batch.hypotheses, batch.references, strip=True)
        return [row[order - 1] for row in per_item]

    return reference


_ROUGE_PARTS = {"precision": 0, "recall": 1, "fmeasure": 2}


def coco_rouge_reference(part: str = "fmeasure", beta: float = 1.2) -> BatchValues:
    """nlg-eval's ROUGE-L (``Rouge.calc_score``, beta 1.2) or the precision or recall it maximises."""

    def reference(batch: MetricBatch) -> list[float | None]:
        rows = coco_rouge(batch.hypotheses, batch.references, beta, strip=True)
        return [row[_ROUGE_PARTS[part]] for row in rows]

    return reference


def coco_cider_reference(*, df: str = "contexts", sigma: float = 6.0) -> BatchValues:
    """nlg-eval's CIDEr-D: pycocoevalcap's ``Cider`` with one "image" per context of the batch (``df:contexts``:
    nlg-eval scores one system's file, in which each context is one line; a context answered by several systems
    is still one document), or one image per item (``df:lines``).

    pycocoevalcap scores one hypothesis per image and takes its document frequencies from the references alone,
    so the items of a context are scored in rounds: round k gives every context its k-th reply (or, where it
    has fewer, its first, whose value is not read)."""

    def reference(batch: MetricBatch) -> list[float | None]:
        if df == "lines":
            return list(coco_cider(batch.hypotheses, batch.references, sigma=sigma, strip=True))
        contexts: dict[tuple[str, tuple[str, ...]], list[int]] = {}
        for index, (query, refs) in enumerate(zip(batch.queries, batch.references, strict=True)):
            contexts.setdefault((query, tuple(ref.strip() for ref in refs)), []).append(index)
        values: list[float | None] = [None] * len(batch)
        for round_ in range(max((len(items) for items in contexts.values()), default=0)):
            picked = [items[round_] if round_ < len(items) else items[0] for items in contexts.values()]
            scores = coco_cider(
                [batch.hypotheses[i] for i in picked],
                [batch.references[i] for i in picked],
                sigma=sigma,
                strip=True,
            )
            for items, index, value in zip(contexts.values(), picked, scores, strict=True):
                if round_ < len(items):
                    values[index] = value
        return values

    return reference


def coco_corpus_bleu_reference() -> Callable[[Sequence[ContextOutputs]], float | None]:
    """nlg-eval's corpus BLEU-4: pycocoevalcap's corpus value over a system's outputs."""

    def reference(contexts: Sequence[ContextOutputs]) -> float | None:
        pairs = [(output, context.references) for context in contexts for output in context.outputs]
        corpus, _ = coco_bleu([output for output, _ in pairs], [refs for _, refs in pairs], strip=True)
        return corpus[3]

    return reference


# --- sacrebleu -----------------------------------------------------------------------------------------------


def sacrebleu_bleu_reference(order: int, options: Mapping[str, str] | None = None) -> BatchValues:
    """sacrebleu's ``BLEU(...).sentence_score`` / 100 with the engine's option names mapped to its arguments."""
    from sacrebleu.metrics import BLEU

    chosen = dict(options or {})
    metric = BLEU(
        max_ngram_order=order,
        tokenize=chosen.get("tok", "13a"),
        smooth_method=chosen.get("smooth", "exp"),
        effective_order=chosen.get("eff", "yes") == "yes",
        lowercase=chosen.get("case", "mixed") == "lc",
    )

    def reference(batch: MetricBatch) -> list[float | None]:
        return [
            metric.sentence_score(hyp, list(refs)).score / 100
            for hyp, refs in zip(batch.hypotheses, batch.references, strict=True)
        ]

    return reference


def sacrebleu_chrf_reference(word_order: int, *, lowercase: bool = False) -> BatchValues:
    """sacrebleu's ``sentence_chrf`` / 100 (chrF++ with ``word_order=2``), the text lowercased first for
    ``case:lc``."""
    import sacrebleu

    def reference(batch: MetricBatch) -> list[float | None]:
        def case(text: str) -> str:
            return text.lower() if lowercase else text

        return [
            sacrebleu.sentence_chrf(case(hyp), [case(ref) for ref in refs], word_order=word_order).score / 100
            for hyp, refs in zip(batch.hypotheses, batch.references, strict=True)
        ]

    return reference


def _streams(contexts: Sequence[ContextOutputs]) -> tuple[list[str], list[list[str | None]]]:
    """sacrebleu's layout: the outputs, and reference streams padded with None where a context has fewer."""
    pairs = [(output, list(context.references)) for context in contexts for output in context.outputs]
    width = max((len(refs) for _, refs in pairs), default=0)
    streams: list[list[str | None]] = [
        [refs[k] if k < len(refs) else None for _, refs in pairs] for k in range(width)
    ]
    return [output for output, _ in pairs], streams


def sacrebleu_corpus_bleu_reference(
    options: Mapping[str, str] | None = None,
) -> Callable[[Sequence[ContextOutputs]], float | None]:
    import sacrebleu

    chosen = dict(options or {})

    def reference(contexts: Sequence[ContextOutputs]) -> float | None:
        hypotheses, streams = _streams(contexts)
        return float(
            sacrebleu.corpus_bleu(
                hypotheses,
                streams,  # type: ignore[arg-type]
                tokenize=chosen.get("tok", "13a"),
                smooth_method=chosen.get("smooth", "exp"),
                lowercase=chosen.get("case", "mixed") == "lc",
            ).score
            / 100
        )

    return reference


def sacrebleu_corpus_chrf_reference(word_order: int) -> Callable[[Sequence[ContextOutputs]], float | None]:
    import sacrebleu

    def reference(contexts: Sequence[ContextOutputs]) -> float | None:
        hypotheses, streams = _streams(contexts)
        return float(sacrebleu.corpus_chrf(hypotheses, streams, word_order=word_order).score / 100)  # type: ignore[arg-type]

    return reference


# --- embedding metrics ---------------------------------------------------------------------------------------


def nlg_eval_tokens(text: str) -> list[str]:
    """nltk's word_tokenize as nlg-eval calls it: sentences (here: split after . ! ? and a space, which is
    what Punkt does on these texts), then the Treebank-style word tokenizer on each."""
    import nltk

    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return [
        token
        for sentence in sentences
        if sentence
        for token in nltk.word_tokenize(sentence, preserve_line=True)
    ]


def nlg_eval_embedding_reference(name: str, vectors: WordVectors) -> BatchValues:
    """nlg-eval's ``eval_emb_metrics`` per item (its ``mean()`` left out), written after
    nlgeval/word2vec/evaluate.py: a word without a vector is the mean of all vectors, sentence vectors are the
    normalised sum and the extrema by its lambda, cosines by sklearn, the best reference per item."""
    from sklearn.metrics.pairwise import cosine_similarity

    matrix = np.asarray(vectors.matrix)
    unknown = matrix.mean(axis=0)

    def vec(word: str) -> np.ndarray:
        row = vectors.vocabulary.get(word)
        return matrix[row] if row is not None else unknown

    def sentence(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        embs = np.array([vec(word) for word in nlg_eval_tokens(text)])
        average = np.sum(embs, axis=0) / np.linalg.norm(np.sum(embs, axis=0))
        maxemb, minemb = np.max(embs, axis=0), np.min(embs, axis=0)
        extreme = list(
            map(
                lambda x, y: x if ((x > y or x < -y) and y > 0) or ((x < y or x > -y) and y < 0) else y,
                maxemb,
                minemb,
            )
        )
        return embs, average, np.array(extreme)

    def score(hypothesis: str, reference: str) -> float:
        hyp_embs, hyp_avg, hyp_ext = sentence(hypothesis)
        ref_embs, ref_avg, ref_ext = sentence(reference)
        if name == "embedding-average":
            return float(cosine_similarity([ref_avg], [hyp_avg])[0, 0])
        if name == "vector-extrema":
            return float(cosine_similarity([ref_ext], [hyp_ext])[0, 0])
        similarities = cosine_similarity(ref_embs, hyp_embs)
        return float((similarities.max(axis=0).mean() + similarities.max(axis=1).mean()) / 2)

    def reference(batch: MetricBatch) -> list[float | None]:
        return [
            max(score(hyp, ref) for ref in refs)
            for hyp, refs in zip(batch.hypotheses, batch.references, strict=True)
        ]

    return reference


def plain_embedding_scores(
    hypothesis: Sequence[str], reference: Sequence[str], vectors: WordVectors
) -> dict[str, float]:
    """One pair, written plainly with scipy's cosine distance (Liu et al., 2016's three definitions, unknown
    words skipped), to cross-check the batched code."""
    from scipy.spatial.distance import cosine as scipy_cosine_distance

    h = vectors.lookup(list(hypothesis)).astype(np.float64)
    r = vectors.lookup(list(reference)).astype(np.float64)

    def cos(x: np.ndarray, y: np.ndarray) -> float:
        return 1.0 - float(scipy_cosine_distance(x, y))

    def extrema(m: np.ndarray) -> np.ndarray:
        return np.array([max(col) if max(col) > abs(min(col)) else min(col) for col in m.T])

    def one_way(x: np.ndarray, y: np.ndarray) -> float:
        return sum(max(cos(u, v) for v in y) for u in x) / len(x)

    return {
        "embedding-average": cos(h.mean(axis=0), r.mean(axis=0)),
        "vector-extrema": cos(extrema(h), extrema(r)),
        "greedy-matching": (one_way(h, r) + one_way(r, h)) / 2,
    }


def plain_embedding_reference(
    name: str, vectors: WordVectors, *, tokenizer: str = DEFAULT_TOKENIZER
) -> BatchValues:
    """:func:`plain_embedding_scores` of the best reference, on the engine's tokens."""
    words = _tokens("en", tokenizer)

    def reference(batch: MetricBatch) -> list[float | None]:
        return [
            max(plain_embedding_scores(words(hyp), words(ref), vectors)[name] for ref in refs)
            for hyp, refs in zip(batch.hypotheses, batch.references, strict=True)
        ]

    return reference
