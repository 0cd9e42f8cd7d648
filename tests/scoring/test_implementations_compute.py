"""Each implementation of each metric (a metric's number depends on the tool that computed it), through the metric tester (:mod:`tests.scoring.metric_tester`: the registry's one entry point,
``compute_metrics(..., implementations=...)`` and ``compute_system_metric(..., implementation=...)``, on one
batch, in slices, per system, with its signature), equals the tool it is named after, computed by that tool
itself (:mod:`tests.scoring.reference_metrics`): pycocoevalcap called as nlg-eval calls it (stripped text, one
"image" per item), sacrebleu, Google's rouge-score; nlg-eval's embedding metrics re-computed from nlg-eval's
``eval_emb_metrics`` (nlgeval/word2vec/evaluate.py) over the GloVe 6B 50d vectors.

METEOR 1.5 needs Java (two processes: the project's and pycocoevalcap's own, started side by side), so it is
checked in one test only.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence

import pytest

from scoring.metrics.registry import compute_metrics, compute_system_metric
from scoring.metrics.system_specs import ContextOutputs
from scoring.metrics.word_vectors import glove_6b_50d
from tests.scoring.metric_batches import DIALOG_SAMPLE, MetricBatch
from tests.scoring.metric_tester import MetricTester, SystemMetricTester
from tests.scoring.reference_metrics import (
    coco_bleu_reference,
    coco_cider_reference,
    coco_corpus_bleu_reference,
    coco_inputs,
    coco_rouge_reference,
    nlg_eval_embedding_reference,
    nltk_bleu_reference,
    nltk_corpus_bleu_reference,
    rouge_scorer_reference,
    sacrebleu_bleu_reference,
    sacrebleu_chrf_reference,
    sacrebleu_corpus_bleu_reference,
    sacrebleu_corpus_chrf_reference,
)

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
BATCH = MetricBatch.of_pairs(ITEMS)
BATCHES = [pytest.param(BATCH, id="items"), pytest.param(DIALOG_SAMPLE, id="dialog-sample")]


def _compute(
    names: Sequence[str],
    implementation: str,
    *,
    hypotheses: Sequence[str] = HYPOTHESES,
    references: Sequence[Sequence[str]] = REFERENCES,
    params: Mapping[str, str] | None = None,
) -> dict[str, list[float | None]]:
    return compute_metrics(
        list(names),
        list(hypotheses),
        [list(refs) for refs in references],
        [f"turn {index}" for index in range(len(hypotheses))],
        "en",
        params=params,
        implementations=dict.fromkeys(names, implementation),
    )


# --- BLEU ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_nlg_eval_bleu_equals_pycocoevalcap_per_sentence(order: int, batch: MetricBatch) -> None:
    MetricTester(f"bleu-{order}", coco_bleu_reference(order), TOLERANCE, implementation="nlg-eval").check(
        batch
    )


def test_nlg_eval_bleu_has_cocos_floor_not_a_smoothing() -> None:
    # coco's floor, not a smoothing: a reply with no matching bigram gets (almost) zero, not nltk's method1
    assert _compute(["bleu-2"], "nlg-eval")["bleu-2"][3] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("batch", BATCHES)
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
@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_sacrebleu_bleu_orders_equal_sacrebleu_with_the_options(
    order: int, options: dict[str, str], batch: MetricBatch
) -> None:
    """With no option, BLEU-4 is sacrebleu's ``sentence_bleu`` itself."""
    reference = sacrebleu_bleu_reference(order, options)
    MetricTester(f"bleu-{order}", reference, TOLERANCE, params=options, implementation="sacrebleu").check(
        batch
    )


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


@pytest.mark.parametrize("batch", BATCHES)
def test_the_default_implementation_gives_the_numbers_it_always_gave(batch: MetricBatch) -> None:
    names = ["bleu-2", "rouge-l", "embedding-average"]
    args = (list(batch.hypotheses), [list(refs) for refs in batch.references], list(batch.queries), "en")
    plain = compute_metrics(names, *args)
    assert plain == compute_metrics(names, *args, implementations=dict.fromkeys(names, "nltk"))
    # and those are nltk's sentence_bleu (method1) on the project tokenizer, the closest reference
    for implementation in ("", "nltk"):
        MetricTester("bleu-2", nltk_bleu_reference(2), TOLERANCE, implementation=implementation).check(batch)


# --- ROUGE ---------------------------------------------------------------------------------------------------

ROUGE_BATCH = MetricBatch.of(
    [*HYPOTHESES, "he was running to the stations", "First line.\nSecond line here."],
    [*REFERENCES, ["he runs to the station"], ["first line\nthe second line here"]],
)
ROUGE_SCORE_PARTS = {
    "rouge-l": ("rougeL", "fmeasure"),
    "rouge-l-precision": ("rougeL", "precision"),
    "rouge-l-recall": ("rougeL", "recall"),
    "rouge-lsum": ("rougeLsum", "fmeasure"),
}


@pytest.mark.parametrize(
    "batch", [pytest.param(ROUGE_BATCH, id="items"), pytest.param(DIALOG_SAMPLE, id="dialog")]
)
@pytest.mark.parametrize("name", ROUGE_SCORE_PARTS)
@pytest.mark.parametrize("stem", ["no", "yes"])
def test_rouge_score_rouge_l_equals_rouge_scorer(stem: str, name: str, batch: MetricBatch) -> None:
    rouge_type, part = ROUGE_SCORE_PARTS[name]
    reference = rouge_scorer_reference(rouge_type, part, stem=stem == "yes")
    MetricTester(name, reference, TOLERANCE, params={"stem": stem}, implementation="rouge-score").check(batch)


def test_the_stemmer_option_changes_rouge_score_values() -> None:
    hypotheses, references = ["he was running to the stations"], [["he runs to the station"]]
    plain = _compute(["rouge-l"], "rouge-score", hypotheses=hypotheses, references=references)["rouge-l"][0]
    stemmed = _compute(
        ["rouge-l"], "rouge-score", hypotheses=hypotheses, references=references, params={"stem": "yes"}
    )["rouge-l"][0]
    assert plain is not None
    assert stemmed is not None
    assert stemmed > plain


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize(
    ("name", "part"),
    [("rouge-l", "fmeasure"), ("rouge-l-precision", "precision"), ("rouge-l-recall", "recall")],
)
def test_nlg_eval_rouge_l_equals_pycocoevalcap(name: str, part: str, batch: MetricBatch) -> None:
    MetricTester(name, coco_rouge_reference(part), TOLERANCE, implementation="nlg-eval").check(batch)


# --- METEOR 1.5 (Java) ---------------------------------------------------------------------------------------


def test_nlg_eval_meteor_equals_pycocoevalcaps_meteor_1_5() -> None:
    if shutil.which("java") is None:
        pytest.skip("METEOR 1.5 needs Java, which is not installed here")
    from pycocoevalcap.meteor.meteor import Meteor

    theirs_process = Meteor()  # its Java starts now, while the project's starts in compute_metrics

    def reference(batch: MetricBatch) -> list[float | None]:
        _, theirs = theirs_process.compute_score(*coco_inputs(batch.hypotheses, batch.references, strip=True))
        return [float(value) for value in theirs]

    try:
        ours = MetricTester("meteor", reference, TOLERANCE, implementation="nlg-eval").check(BATCH)
    finally:
        theirs_process.meteor_p.kill()
        theirs_process.meteor_p.wait()
    # not nltk's port: another algorithm, other numbers
    nltk_values = _compute(["meteor"], "nltk")["meteor"]
    assert any(abs(float(a) - float(b)) > 0.01 for a, b in zip(ours, nltk_values, strict=True))  # type: ignore[arg-type]


# --- CIDEr-D -------------------------------------------------------------------------------------------------


def test_cider_d_equals_pycocoevalcap_on_one_system() -> None:
    MetricTester("cider-d", coco_cider_reference(), TOLERANCE, implementation="nlg-eval").check(BATCH)


def test_cider_d_counts_each_context_once_when_several_systems_answer_it() -> None:
    # two systems answering every context: each system's values are pycocoevalcap's on that system alone
    other = ["fine", "and you ?", "it is nice", "yes", "see you at the station", "bye", "pizza"]
    batch = MetricBatch.of(
        [*HYPOTHESES, *other],
        [*REFERENCES, *REFERENCES],
        queries=[*QUERIES, *QUERIES],
        systems=["first"] * len(ITEMS) + ["second"] * len(other),
    )
    MetricTester("cider-d", coco_cider_reference(), TOLERANCE, implementation="nlg-eval").check(batch)
    MetricTester("cider-d", coco_cider_reference(), TOLERANCE, implementation="nlg-eval").check(DIALOG_SAMPLE)


@pytest.mark.parametrize("batch", BATCHES)
def test_cider_d_with_df_lines_equals_pycocoevalcap_on_the_whole_batch(batch: MetricBatch) -> None:
    reference = coco_cider_reference(df="lines")
    MetricTester("cider-d", reference, TOLERANCE, params={"df": "lines"}, implementation="nlg-eval").check(
        batch
    )


# --- chrF ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize(("name", "word_order"), [("chrf", 0), ("chrf++", 2)])
@pytest.mark.parametrize("case", ["mixed", "lc"])
def test_chrf_and_chrf_plus_plus_equal_sacrebleu_sentence_chrf(
    case: str, name: str, word_order: int, batch: MetricBatch
) -> None:
    reference = sacrebleu_chrf_reference(word_order, lowercase=case == "lc")
    params = {"case": case} if case == "lc" else {}
    MetricTester(name, reference, TOLERANCE, params=params, implementation="sacrebleu").check(batch)


# --- embedding metrics ---------------------------------------------------------------------------------------

EMBEDDING_ITEMS: list[tuple[str, list[str]]] = [
    *ITEMS,
    ("Zorblax said hello to Quuxley", ["hello , how are you ?", "Zorblax waved"]),
    ("I am fine. Thank you!", ["i am fine . thank you ."]),
    ("wibblefrotz", ["hello there"]),  # only unknown words: the mean vector still gives a value
]


@pytest.mark.parametrize("name", ["embedding-average", "vector-extrema", "greedy-matching"])
def test_nlg_eval_embedding_metrics_equal_nlg_evals_computation(name: str) -> None:
    # float32 vectors summed in another order: equal to rounding
    reference = nlg_eval_embedding_reference(name, glove_6b_50d())
    MetricTester(name, reference, 1e-5, implementation="nlg-eval").check(
        MetricBatch.of_pairs(EMBEDDING_ITEMS)
    )


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


CORPUS_BATCH = MetricBatch.of_pairs(CORPUS_ITEMS)
CORPUS_BATCHES = [pytest.param(CORPUS_BATCH, id="items"), pytest.param(DIALOG_SAMPLE, id="dialog-sample")]


def _contexts() -> list[ContextOutputs]:
    return [ContextOutputs([reply], refs) for reply, refs in CORPUS_ITEMS]


@pytest.mark.parametrize("batch", CORPUS_BATCHES)
@pytest.mark.parametrize("options", [{}, {"tok": "intl", "smooth": "floor", "case": "lc"}])
def test_corpus_bleu_by_sacrebleu_equals_sacrebleu_corpus_bleu(
    options: dict[str, str], batch: MetricBatch
) -> None:
    reference = sacrebleu_corpus_bleu_reference(options)
    SystemMetricTester("corpus-bleu", reference, TOLERANCE, params=options, implementation="sacrebleu").check(
        batch
    )
    ours = compute_system_metric("corpus-bleu", _contexts(), "en", options, implementation="sacrebleu")
    assert ours.items == len(CORPUS_ITEMS)


@pytest.mark.parametrize("batch", CORPUS_BATCHES)
@pytest.mark.parametrize(("name", "word_order"), [("corpus-chrf", 0), ("corpus-chrf++", 2)])
def test_corpus_chrf_by_sacrebleu_equals_sacrebleu_corpus_chrf(
    name: str, word_order: int, batch: MetricBatch
) -> None:
    reference = sacrebleu_corpus_chrf_reference(word_order)
    SystemMetricTester(name, reference, TOLERANCE, implementation="sacrebleu").check(batch)


@pytest.mark.parametrize("batch", CORPUS_BATCHES)
def test_corpus_bleu_by_nlg_eval_equals_pycocoevalcaps_corpus_bleu_4(batch: MetricBatch) -> None:
    SystemMetricTester(
        "corpus-bleu", coco_corpus_bleu_reference(), TOLERANCE, implementation="nlg-eval"
    ).check(batch)


def test_the_three_corpus_bleus_differ_and_the_default_is_nltks() -> None:
    values = {
        implementation: compute_system_metric(
            "corpus-bleu", _contexts(), "en", implementation=implementation
        ).value
        for implementation in ("", "nltk", "sacrebleu", "nlg-eval")
    }
    assert values[""] == values["nltk"]
    for implementation in ("", "nltk"):
        tester = SystemMetricTester(
            "corpus-bleu", nltk_corpus_bleu_reference(), TOLERANCE, implementation=implementation
        )
        tester.check(CORPUS_BATCH)
    assert len({round(float(value), 6) for value in values.values() if value is not None}) == 3
