"""Each implementation of each metric (issue 23), through the registry's one entry point (``compute_metrics(...,
implementations=...)`` and ``compute_system_metric(..., implementation=...)``), equals the tool it is named
after, computed here by that tool itself: pycocoevalcap called as nlg-eval calls it (stripped text, one
"image" per item), sacrebleu, Google's rouge-score; nlg-eval's embedding metrics re-computed here from
nlg-eval's ``eval_emb_metrics`` (nlgeval/word2vec/evaluate.py) over the GloVe 6B 50d vectors.

METEOR 1.5 needs Java (two processes: the project's and pycocoevalcap's own, started side by side), so it is
checked in one test only.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence

import nltk
import numpy as np
import pytest
import sacrebleu
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.rouge.rouge import Rouge, my_lcs
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU

from scoring.metrics.registry import compute_metrics, compute_system_metric
from scoring.metrics.system_specs import ContextOutputs
from scoring.metrics.tokenize import tokenize
from scoring.metrics.word_vectors import glove_6b_50d

TOLERANCE = 1e-9

# (reply, references): dialog replies as people write them, with the usual edge cases of sentence scores
ITEMS: list[tuple[str, list[str]]] = [
    ("i am fine , thank you .", ["i am fine , thank you ."]),
    ("I'm fine, thanks! And you?", ["i am fine , thank you .", "Fine, thanks. And you?"]),
    ("the weather is nice today", ["it is raining", "the weather is lovely today", "nice"]),
    ("no", ["yes , of course"]),
    ("Let's meet at the train station at 5 pm.", ["OK, see you at the station at five."]),
    ("  see you tomorrow  ", ["see you tomorrow then", "bye"]),
    ("what do you want for dinner ?", ["how about pizza for dinner ?"]),
]
HYPOTHESES = [reply for reply, _ in ITEMS]
REFERENCES = [refs for _, refs in ITEMS]
QUERIES = [f"turn {index}" for index in range(len(ITEMS))]  # one context per item


def _compute(
    names: Sequence[str],
    implementation: str,
    *,
    hypotheses: Sequence[str] = HYPOTHESES,
    references: Sequence[Sequence[str]] = REFERENCES,
    queries: Sequence[str] | None = None,
    params: Mapping[str, str] | None = None,
) -> dict[str, list[float | None]]:
    return compute_metrics(
        list(names),
        list(hypotheses),
        [list(refs) for refs in references],
        list(queries if queries is not None else [f"turn {index}" for index in range(len(hypotheses))]),
        "en",
        params=params,
        implementations=dict.fromkeys(names, implementation),
    )


def _coco_inputs(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """pycocoevalcap's layout, text stripped as nlg-eval's ``compute_metrics`` strips it."""
    gts = {index: [ref.strip() for ref in refs] for index, refs in enumerate(references)}
    res = {index: [hypothesis.strip()] for index, hypothesis in enumerate(hypotheses)}
    return gts, res


def assert_close(ours: Sequence[float | None], theirs: Sequence[float], tolerance: float = TOLERANCE) -> None:
    assert len(ours) == len(theirs)
    assert all(value is not None for value in ours)
    worst = max(abs(float(a) - float(b)) for a, b in zip(ours, theirs, strict=True))  # type: ignore[arg-type]
    assert worst <= tolerance, f"largest difference {worst:.3e}: {list(ours)} vs {list(theirs)}"


# --- BLEU ----------------------------------------------------------------------------------------------------


def test_nlg_eval_bleu_equals_pycocoevalcap_per_sentence() -> None:
    ours = _compute(["bleu-1", "bleu-2", "bleu-3", "bleu-4"], "nlg-eval")
    _, per_order = Bleu(4).compute_score(*_coco_inputs(HYPOTHESES, REFERENCES), verbose=0)
    for order in range(1, 5):
        assert_close(ours[f"bleu-{order}"], [float(value) for value in per_order[order - 1]])
    # coco's floor, not a smoothing: a reply with no matching bigram gets (almost) zero, not nltk's method1
    assert ours["bleu-2"][3] == pytest.approx(0.0, abs=1e-6)


def test_sacrebleu_bleu_4_equals_sacrebleu_sentence_bleu() -> None:
    ours = _compute(["bleu-4"], "sacrebleu")["bleu-4"]
    theirs = [sacrebleu.sentence_bleu(hyp, refs).score / 100 for hyp, refs in ITEMS]
    assert_close(ours, theirs)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"tok": "intl"},
        {"tok": "char", "smooth": "floor"},
        {"smooth": "add-k", "eff": "no"},
        {"case": "lc", "tok": "none", "smooth": "none"},
    ],
)
def test_sacrebleu_bleu_orders_equal_sacrebleu_with_the_options(options: dict[str, str]) -> None:
    names = ["bleu-1", "bleu-2", "bleu-3", "bleu-4"]
    ours = _compute(names, "sacrebleu", params=options)
    for order in range(1, 5):
        metric = BLEU(
            max_ngram_order=order,
            tokenize=options.get("tok", "13a"),
            smooth_method=options.get("smooth", "exp"),
            effective_order=options.get("eff", "yes") == "yes",
            lowercase=options.get("case", "mixed") == "lc",
        )
        theirs = [metric.sentence_score(hyp, refs).score / 100 for hyp, refs in ITEMS]
        assert_close(ours[f"bleu-{order}"], theirs)


def test_a_sacrebleu_option_changes_the_values() -> None:
    # the options reach sacrebleu: lowercasing changes the score of a reply that differs from its reference in
    # case only
    hypotheses, references = ["Fine, Thanks. And You?"], [["fine, thanks. and you?"]]
    mixed = _compute(["bleu-4"], "sacrebleu", hypotheses=hypotheses, references=references)["bleu-4"][0]
    lowered = _compute(
        ["bleu-4"], "sacrebleu", hypotheses=hypotheses, references=references, params={"case": "lc"}
    )["bleu-4"][0]
    assert lowered == pytest.approx(1.0)
    assert mixed is not None
    assert mixed < 0.5


def test_the_default_implementation_gives_the_numbers_it_always_gave() -> None:
    names = ["bleu-2", "rouge-l", "embedding-average"]
    plain = compute_metrics(names, HYPOTHESES, REFERENCES, QUERIES, "en")
    named = compute_metrics(
        names, HYPOTHESES, REFERENCES, QUERIES, "en", implementations=dict.fromkeys(names, "nltk")
    )
    assert plain == named
    # and those are nltk's sentence_bleu (method1) on the project tokenizer, the closest reference
    smoothing = SmoothingFunction().method1
    expected = [
        max(
            sentence_bleu([tokenize(ref)], tokenize(hyp), weights=(0.5, 0.5), smoothing_function=smoothing)
            for ref in refs
        )
        for hyp, refs in ITEMS
    ]
    assert_close(plain["bleu-2"], expected)


# --- ROUGE ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", ["no", "yes"])
def test_rouge_score_rouge_l_equals_rouge_scorer(stem: str) -> None:
    hypotheses = [*HYPOTHESES, "he was running to the stations", "First line.\nSecond line here."]
    references = [*REFERENCES, ["he runs to the station"], ["first line\nthe second line here"]]
    names = ["rouge-l", "rouge-l-precision", "rouge-l-recall", "rouge-lsum"]
    ours = _compute(names, "rouge-score", hypotheses=hypotheses, references=references, params={"stem": stem})
    scorer = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"], use_stemmer=stem == "yes")
    best = [scorer.score_multi(list(refs), hyp) for hyp, refs in zip(hypotheses, references, strict=True)]
    assert_close(ours["rouge-l"], [score["rougeL"].fmeasure for score in best])
    assert_close(ours["rouge-l-precision"], [score["rougeL"].precision for score in best])
    assert_close(ours["rouge-l-recall"], [score["rougeL"].recall for score in best])
    assert_close(ours["rouge-lsum"], [score["rougeLsum"].fmeasure for score in best])


def test_the_stemmer_option_changes_rouge_score_values() -> None:
    hypotheses, references = ["he was running to the stations"], [["he runs to the station"]]
    plain = _compute(["rouge-l"], "rouge-score", hypotheses=hypotheses, references=references)["rouge-l"][0]
    stemmed = _compute(
        ["rouge-l"], "rouge-score", hypotheses=hypotheses, references=references, params={"stem": "yes"}
    )["rouge-l"][0]
    assert plain is not None
    assert stemmed is not None
    assert stemmed > plain


def test_nlg_eval_rouge_l_equals_pycocoevalcap() -> None:
    names = ["rouge-l", "rouge-l-precision", "rouge-l-recall"]
    ours = _compute(names, "nlg-eval")
    gts, res = _coco_inputs(HYPOTHESES, REFERENCES)
    _, f_scores = Rouge().compute_score(gts, res)
    assert_close(ours["rouge-l"], [float(value) for value in f_scores])
    precision, recall = [], []
    for index in range(len(ITEMS)):
        candidate = res[index][0].split(" ")
        lcs = [my_lcs(reference.split(" "), candidate) for reference in gts[index]]
        precision.append(max(value / len(candidate) for value in lcs))
        recall.append(max(value / len(ref.split(" ")) for value, ref in zip(lcs, gts[index], strict=True)))
    assert_close(ours["rouge-l-precision"], precision)
    assert_close(ours["rouge-l-recall"], recall)


# --- METEOR 1.5 (Java) ---------------------------------------------------------------------------------------


def test_nlg_eval_meteor_equals_pycocoevalcaps_meteor_1_5() -> None:
    if shutil.which("java") is None:
        pytest.skip("METEOR 1.5 needs Java, which is not installed here")
    from pycocoevalcap.meteor.meteor import Meteor

    theirs_process = Meteor()  # its Java starts now, while the project's starts in compute_metrics
    try:
        ours = _compute(["meteor"], "nlg-eval")["meteor"]
        _, theirs = theirs_process.compute_score(*_coco_inputs(HYPOTHESES, REFERENCES))
    finally:
        theirs_process.meteor_p.kill()
        theirs_process.meteor_p.wait()
    assert_close(ours, [float(value) for value in theirs])
    # not nltk's port: another algorithm, other numbers
    nltk_values = _compute(["meteor"], "nltk")["meteor"]
    assert any(abs(float(a) - float(b)) > 0.01 for a, b in zip(ours, nltk_values, strict=True))  # type: ignore[arg-type]


# --- CIDEr-D -------------------------------------------------------------------------------------------------


def test_cider_d_equals_pycocoevalcap_on_one_system() -> None:
    ours = _compute(["cider-d"], "nlg-eval")["cider-d"]
    _, theirs = Cider().compute_score(*_coco_inputs(HYPOTHESES, REFERENCES))
    assert_close(ours, [float(value) for value in theirs])


def test_cider_d_counts_each_context_once_when_several_systems_answer_it() -> None:
    # two systems answering every context: each system's values are pycocoevalcap's on that system alone
    other = ["fine", "and you ?", "it is nice", "yes", "see you at the station", "bye", "pizza"]
    hypotheses = [*HYPOTHESES, *other]
    references = [*REFERENCES, *REFERENCES]
    queries = [*QUERIES, *QUERIES]
    ours = _compute(["cider-d"], "nlg-eval", hypotheses=hypotheses, references=references, queries=queries)
    _, first = Cider().compute_score(*_coco_inputs(HYPOTHESES, REFERENCES))
    _, second = Cider().compute_score(*_coco_inputs(other, REFERENCES))
    assert_close(ours["cider-d"], [*map(float, first), *map(float, second)])


# --- chrF ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["mixed", "lc"])
def test_chrf_and_chrf_plus_plus_equal_sacrebleu_sentence_chrf(case: str) -> None:
    ours = _compute(["chrf", "chrf++"], "sacrebleu", params={"case": case} if case == "lc" else None)
    lowercase = case == "lc"
    chrf = [
        sacrebleu.sentence_chrf(
            hyp.lower() if lowercase else hyp, [r.lower() if lowercase else r for r in refs]
        )
        for hyp, refs in ITEMS
    ]
    chrf_plus = [
        sacrebleu.sentence_chrf(
            hyp.lower() if lowercase else hyp, [r.lower() if lowercase else r for r in refs], word_order=2
        )
        for hyp, refs in ITEMS
    ]
    assert_close(ours["chrf"], [score.score / 100 for score in chrf])
    assert_close(ours["chrf++"], [score.score / 100 for score in chrf_plus])


# --- embedding metrics ---------------------------------------------------------------------------------------


def _nlg_eval_tokens(text: str) -> list[str]:
    """nltk's word_tokenize as nlg-eval calls it: sentences (here: split after . ! ? and a space, which is
    what Punkt does on these texts), then the Treebank-style word tokenizer on each."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return [
        token
        for sentence in sentences
        if sentence
        for token in nltk.word_tokenize(sentence, preserve_line=True)
    ]


def _nlg_eval_embedding(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> dict[str, list[float]]:
    """nlg-eval's ``eval_emb_metrics`` per item (its ``mean()`` left out), over GloVe 6B 50d, written after
    nlgeval/word2vec/evaluate.py: a word without a vector is the mean of all vectors, sentence vectors are the
    normalised sum and the extrema by its lambda, cosines by sklearn, the best reference per item."""
    from sklearn.metrics.pairwise import cosine_similarity

    vectors = glove_6b_50d()
    matrix = np.asarray(vectors.matrix)
    unknown = matrix.mean(axis=0)

    def vec(word: str) -> np.ndarray:
        row = vectors.vocabulary.get(word)
        return matrix[row] if row is not None else unknown

    def sentence(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        embs = np.array([vec(word) for word in _nlg_eval_tokens(text)])
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

    scores: dict[str, list[float]] = {"embedding-average": [], "vector-extrema": [], "greedy-matching": []}
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        hyp_embs, hyp_avg, hyp_ext = sentence(hypothesis)
        averages, extrema, greedy = [], [], []
        for reference in refs:
            ref_embs, ref_avg, ref_ext = sentence(reference)
            averages.append(cosine_similarity([ref_avg], [hyp_avg])[0, 0])
            extrema.append(cosine_similarity([ref_ext], [hyp_ext])[0, 0])
            similarities = cosine_similarity(ref_embs, hyp_embs)
            greedy.append((similarities.max(axis=0).mean() + similarities.max(axis=1).mean()) / 2)
        scores["embedding-average"].append(float(max(averages)))
        scores["vector-extrema"].append(float(max(extrema)))
        scores["greedy-matching"].append(float(max(greedy)))
    return scores


EMBEDDING_ITEMS: list[tuple[str, list[str]]] = [
    *ITEMS,
    ("Zorblax said hello to Quuxley", ["hello , how are you ?", "Zorblax waved"]),
    ("I am fine. Thank you!", ["i am fine . thank you ."]),
    ("wibblefrotz", ["hello there"]),  # only unknown words: the mean vector still gives a value
]


def test_nlg_eval_embedding_metrics_equal_nlg_evals_computation() -> None:
    hypotheses = [reply for reply, _ in EMBEDDING_ITEMS]
    references = [refs for _, refs in EMBEDDING_ITEMS]
    names = ["embedding-average", "vector-extrema", "greedy-matching"]
    ours = _compute(names, "nlg-eval", hypotheses=hypotheses, references=references)
    theirs = _nlg_eval_embedding(hypotheses, references)
    for name in names:
        # float32 vectors summed in another order: equal to rounding
        assert_close(ours[name], theirs[name], tolerance=1e-5)


def test_the_oov_rule_changes_values_only_where_a_word_has_no_vector() -> None:
    names = ["embedding-average", "vector-extrema", "greedy-matching"]
    # an unknown word among known ones; known words only; unknown words only
    hypotheses = ["zorblaxian said hello", "i said hello", "zorblaxian quuxleyish"]
    references = [["hello , how are you ?"]] * 3
    for implementation in ("nltk", "nlg-eval"):
        skip = _compute(
            names, implementation, hypotheses=hypotheses, references=references, params={"oov": "skip"}
        )
        mean = _compute(
            names, implementation, hypotheses=hypotheses, references=references, params={"oov": "mean"}
        )
        for name in names:
            assert skip[name][1] == pytest.approx(mean[name][1], abs=1e-12), (implementation, name)
            # no known word: nothing to compare when unknown words are skipped, the mean vector otherwise
            assert skip[name][2] == 0.0, (implementation, name)
            assert mean[name][2] != pytest.approx(0.0, abs=1e-3), (implementation, name)
        for name in ("embedding-average", "greedy-matching"):  # the extrema may ignore a small mean vector
            assert skip[name][0] != pytest.approx(mean[name][0], abs=1e-6), (implementation, name)
    # nlg-eval's default rule is the mean vector; nltk's default skips
    default = _compute(names, "nlg-eval", hypotheses=hypotheses, references=references)
    assert default == _compute(
        names, "nlg-eval", hypotheses=hypotheses, references=references, params={"oov": "mean"}
    )
    default = _compute(names, "nltk", hypotheses=hypotheses, references=references)
    assert default == _compute(
        names, "nltk", hypotheses=hypotheses, references=references, params={"oov": "skip"}
    )


# --- corpus level ---------------------------------------------------------------------------------------------

CORPUS_ITEMS: list[tuple[str, list[str]]] = [
    ("i am fine , thank you .", ["i am fine , thank you .", "fine , and you ?"]),
    ("the weather is nice today", ["the weather is lovely today", "it is raining"]),
    ("Let's meet at the station at 5 pm.", ["OK, see you at the station at five.", "see you at 5 then"]),
    ("what do you want for dinner ?", ["how about pizza for dinner ?", "dinner at eight ?"]),
    ("no , thanks", ["yes , of course", "no thanks , i am full"]),
]


def _contexts() -> list[ContextOutputs]:
    return [ContextOutputs([reply], refs) for reply, refs in CORPUS_ITEMS]


def _streams() -> list[list[str]]:
    return [[refs[k] for _, refs in CORPUS_ITEMS] for k in range(2)]


@pytest.mark.parametrize("options", [{}, {"tok": "intl", "smooth": "floor", "case": "lc"}])
def test_corpus_bleu_by_sacrebleu_equals_sacrebleu_corpus_bleu(options: dict[str, str]) -> None:
    ours = compute_system_metric("corpus-bleu", _contexts(), "en", options, implementation="sacrebleu")
    theirs = sacrebleu.corpus_bleu(
        [reply for reply, _ in CORPUS_ITEMS],
        _streams(),
        tokenize=options.get("tok", "13a"),
        smooth_method=options.get("smooth", "exp"),
        lowercase=options.get("case", "mixed") == "lc",
    )
    assert ours.value == pytest.approx(theirs.score / 100, abs=TOLERANCE)
    assert ours.items == len(CORPUS_ITEMS)


def test_corpus_chrf_by_sacrebleu_equals_sacrebleu_corpus_chrf() -> None:
    hypotheses = [reply for reply, _ in CORPUS_ITEMS]
    for name, word_order in (("corpus-chrf", 0), ("corpus-chrf++", 2)):
        ours = compute_system_metric(name, _contexts(), "en", implementation="sacrebleu")
        theirs = sacrebleu.corpus_chrf(hypotheses, _streams(), word_order=word_order)
        assert ours.value == pytest.approx(theirs.score / 100, abs=TOLERANCE), name


def test_corpus_bleu_by_nlg_eval_equals_pycocoevalcaps_corpus_bleu_4() -> None:
    ours = compute_system_metric("corpus-bleu", _contexts(), "en", implementation="nlg-eval")
    corpus, _ = Bleu(4).compute_score(
        *_coco_inputs([reply for reply, _ in CORPUS_ITEMS], [refs for _, refs in CORPUS_ITEMS]), verbose=0
    )
    assert ours.value == pytest.approx(float(corpus[3]), abs=TOLERANCE)


def test_the_three_corpus_bleus_differ_and_the_default_is_nltks() -> None:
    values = {
        implementation: compute_system_metric(
            "corpus-bleu", _contexts(), "en", implementation=implementation
        ).value
        for implementation in ("", "nltk", "sacrebleu", "nlg-eval")
    }
    assert values[""] == values["nltk"]
    theirs = nltk.translate.bleu_score.corpus_bleu(
        [[tokenize(ref) for ref in refs] for _, refs in CORPUS_ITEMS],
        [tokenize(reply) for reply, _ in CORPUS_ITEMS],
    )
    assert values["nltk"] == pytest.approx(theirs, abs=TOLERANCE)
    assert len({round(float(value), 6) for value in values.values() if value is not None}) == 3
