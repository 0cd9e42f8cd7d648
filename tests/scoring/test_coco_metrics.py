"""The native coco-caption metrics against pycocoevalcap 1.2 itself (computed here, never copied) to 1e-9.

pycocoevalcap is called as nlg-eval calls it: raw strings, one hypothesis and its references per "image"
(item), BLEU through ``Bleu(4).compute_score`` (option "closest"), ROUGE-L through ``Rouge.calc_score``,
CIDEr-D through ``Cider(n, sigma).compute_score`` over the whole batch.

pycocoevalcap's own example (``example/coco_eval_example.py``) needs ``captions_val2014.json`` and a
results file that the package does not ship, so it has no numbers to check against.
"""

from __future__ import annotations

import json
import random

import pytest

from scoring.metrics.coco import coco_cider_d, coco_corpus_bleu, coco_rouge_l_batch, coco_sentence_bleu_batch
from scoring.metrics.registry import compute_metrics, metric_parameters
from scoring.metrics.signature import metric_signature
from tests.scoring.metric_batches import SHARED_DATA, MetricBatch, dailydialog_batch
from tests.scoring.metric_tester import MetricTester, assert_values_close
from tests.scoring.reference_metrics import (
    coco_bleu,
    coco_bleu_reference,
    coco_cider,
    coco_cider_reference,
    coco_rouge,
    coco_rouge_reference,
)

TOLERANCE = 1e-9
MULTIREF_TEST = SHARED_DATA / "multirefeval" / "multireftest.json"
# the real-data batches go whole through the library functions, and their first items through the metric
# tester, which scores them about a dozen times per metric (one batch, the engine's slices, three slices, ...)
REAL_DATA_TESTER_ITEMS = 400

Batch = tuple[list[str], list[list[str]]]


def assert_close(ours: list[float], theirs: list[float]) -> None:
    assert_values_close(ours, theirs, TOLERANCE)


def assert_all_equal_coco(
    hypotheses: list[str], references: list[list[str]], cider: bool = True, *, limit: int | None = None
) -> None:
    """Every native function against pycocoevalcap on one batch, and every nlg-eval metric through the metric
    tester (the engine strips the text as nlg-eval does; the library functions take it as it comes), on the
    batch's first ``limit`` items where a real-data batch is too large to score a dozen times per metric."""
    corpus, per_item = coco_bleu(hypotheses, references)
    ours = coco_sentence_bleu_batch(hypotheses, references, [1, 2, 3, 4])
    for order in range(4):
        assert_close([row[order] for row in ours], [row[order] for row in per_item])
    for max_order in range(1, 5):
        assert_close(coco_corpus_bleu(hypotheses, references, max_order), corpus[:max_order])
    rouge_ours, rouge_theirs = coco_rouge_l_batch(hypotheses, references), coco_rouge(hypotheses, references)
    for part in range(3):
        assert_close([row[part] for row in rouge_ours], [row[part] for row in rouge_theirs])
    if cider:
        assert_close(coco_cider_d(hypotheses, references), coco_cider(hypotheses, references))
    batch = MetricBatch.of(hypotheses, references)
    testers = [MetricTester(f"bleu-{order}", coco_bleu_reference(order), TOLERANCE) for order in (1, 2, 3, 4)]
    testers += [
        MetricTester(name, coco_rouge_reference(part), TOLERANCE)
        for name, part in (
            ("rouge-l", "fmeasure"),
            ("rouge-l-precision", "precision"),
            ("rouge-l-recall", "recall"),
        )
    ]
    if cider:
        testers.append(
            MetricTester("cider-d", coco_cider_reference(df="lines"), TOLERANCE, params={"df": "lines"})
        )
    for tester in testers:
        MetricTester(
            tester.name, tester.reference, tester.tolerance, params=tester.params, implementation="nlg-eval"
        ).check(batch, limit=limit)


# --- edge cases ------------------------------------------------------------------------------------------

EDGE_CASES: dict[str, tuple[str, list[str]]] = {
    "empty hypothesis": ("", ["a cat sat on the mat ."]),
    "shorter than n": ("hello there", ["hello there my friend", "hello"]),
    "single word": ("hello", ["hello"]),
    "doubled spaces": ("the  cat sat   on", ["the cat  sat on the  mat"]),
    "leading and trailing spaces": (" the cat sat ", ["the cat sat"]),
    "tab and newline": ("the\tcat sat\non it", ["the cat\tsat on it"]),
    "punctuation glued": ("Hello, world! How are you?", ["hello , world ! how are you ?"]),
    "capitals": ("The Cat Sat", ["the cat sat", "THE CAT SAT"]),
    "reference equals hypothesis": ("I am fine, thanks. And you?", ["I am fine, thanks. And you?"]),
    "tie in closeness": ("a b c d e", ["a b c d", "a b c d e f", "x y"]),
    "tie, longer first": ("one two three", ["one two three four", "one two"]),
    "several lengths": (
        "we could go to the cinema tonight if you like",
        [
            "let's go to the cinema",
            "we could go out tonight , if you like",
            "no",
            "the cinema is closed tonight",
        ],
    ),
    "repeated words clipped": ("the the the the the", ["the cat is on the mat", "the the"]),
    "longer than every reference": (
        "well I think that we should really leave right now please",
        ["leave now"],
    ),
    "empty reference among others": ("yes of course", ["", "of course"]),
    "only empty reference": ("fine", [""]),
    "unicode": ("Café ’ naïve 日本語 の テスト", ["café ’ naïve 日本語 テスト", "Café naïve"]),
    "no overlap": ("absolutely", ["no way"]),
}


@pytest.mark.parametrize(("hypothesis", "references"), EDGE_CASES.values(), ids=EDGE_CASES.keys())
def test_edge_case_bleu_and_rouge_equal_pycocoevalcap(hypothesis: str, references: list[str]) -> None:
    assert_all_equal_coco([hypothesis], [references], cider=False)


def test_edge_cases_together_equal_pycocoevalcap() -> None:
    """All edge cases in one batch, CIDEr-D included (its idf needs more than one item)."""
    hypotheses = [hypothesis for hypothesis, _ in EDGE_CASES.values()]
    references = [refs for _, refs in EDGE_CASES.values()]
    assert_all_equal_coco(hypotheses, references)


def test_bleu_orders_are_picked_in_the_order_asked() -> None:
    hypotheses, references = random_batch(50, seed=7)
    _, per_item = coco_bleu(hypotheses, references)
    rows = coco_sentence_bleu_batch(hypotheses, references, [4, 2])
    assert_close([row[0] for row in rows], [row[3] for row in per_item])
    assert_close([row[1] for row in rows], [row[1] for row in per_item])


def test_brevity_penalty_applies_at_equal_length() -> None:
    """pycocoevalcap's (len + 1e-15) / (reflen + 1e-9) is below 1 at equal length: a tiny penalty, kept."""
    [[ours]] = coco_sentence_bleu_batch(["a b c"], [["a b c"]], [1])
    _, [[theirs, *_]] = coco_bleu(["a b c"], [["a b c"]])
    assert ours == pytest.approx(theirs, abs=TOLERANCE)
    assert ours < 1.0


# --- random pairs ----------------------------------------------------------------------------------------

VOCABULARY = ["the", "a", "cat", "Cat", "sat", "on", "mat", ".", ",", "hello!", "über", "naïve", "’", "I'm"]


def random_sentence(rng: random.Random) -> str:
    words = [rng.choice(VOCABULARY) for _ in range(rng.randint(0, 12))]
    text = ""
    for index, word in enumerate(words):
        if index:
            text += "  " if rng.random() < 0.08 else " "
        text += word
    return text


def random_batch(count: int, seed: int) -> Batch:
    rng = random.Random(seed)
    hypotheses = [random_sentence(rng) for _ in range(count)]
    references = [[random_sentence(rng) for _ in range(rng.randint(1, 4))] for _ in range(count)]
    return hypotheses, references


def test_random_pairs_equal_pycocoevalcap() -> None:
    hypotheses, references = random_batch(400, seed=20240611)
    assert_all_equal_coco(hypotheses, references)


@pytest.mark.parametrize("sigma", [6.0, 3.0, 1.5, 12.0])
def test_cider_sigma_equals_pycocoevalcap(sigma: float) -> None:
    hypotheses, references = random_batch(300, seed=int(sigma * 10))
    assert_close(
        coco_cider_d(hypotheses, references, sigma=sigma), coco_cider(hypotheses, references, 4, sigma)
    )


@pytest.mark.parametrize("sigma", ["1.5", "12"])
def test_cider_d_metric_computes_with_its_sigma(sigma: str) -> None:
    """The metric's ``sigma`` (in its signature) is the one its values are computed with: pycocoevalcap's
    ``Cider(sigma=...)`` through the engine, on a batch whose values differ from sigma 6's."""
    hypotheses, references = random_batch(120, seed=int(float(sigma) * 10) + 1)
    assert coco_cider(hypotheses, references, sigma=float(sigma)) != coco_cider(hypotheses, references)
    tester = MetricTester(
        "cider-d",
        coco_cider_reference(df="lines", sigma=float(sigma)),
        TOLERANCE,
        params={"df": "lines", "sigma": sigma},
        implementation="nlg-eval",
    )
    tester.check(MetricBatch.of(hypotheses, references))
    assert f"sigma:{sigma}" in metric_signature("cider-d", metric_parameters("cider-d", {"sigma": sigma}))


def test_cider_d_default_signature_and_values_have_sigma_6() -> None:
    hypotheses, references = random_batch(60, seed=66)
    assert "|sigma:6|" in metric_signature("cider-d", metric_parameters("cider-d"))
    values = compute_metrics(["cider-d"], hypotheses, references, [""] * 60, "en", params={"df": "lines"})
    assert values["cider-d"] == coco_cider_d([text.strip() for text in hypotheses], references, sigma=6.0)


@pytest.mark.parametrize("sigma", ["0", "-1", "wide", "inf", "nan"])
def test_cider_d_refuses_a_sigma_that_is_not_a_positive_number(sigma: str) -> None:
    with pytest.raises(ValueError, match="sigma"):
        compute_metrics(["cider-d"], ["a b"], [["a b c"]], [""], "en", params={"sigma": sigma})


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_cider_other_orders_equal_pycocoevalcap_where_it_runs(n: int) -> None:
    """pycocoevalcap always counts orders 1..4, so Cider(n) only works on texts of at most n words (n < 4);
    Cider(5) averages over 5 orders the 4 it counts, which equals orders 1..5 on texts of at most 4 words."""
    rng = random.Random(n)
    longest = min(n, 4)

    def short() -> str:
        return " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(0, longest)))

    hypotheses = [short() for _ in range(200)]
    references = [[short() for _ in range(rng.randint(1, 4))] for _ in range(200)]
    assert_close(coco_cider_d(hypotheses, references, n=n), coco_cider(hypotheses, references, n))


@pytest.mark.parametrize("beta", [1.0, 1.2, 3.0])
def test_rouge_beta_equals_pycocoevalcap(beta: float) -> None:
    hypotheses, references = random_batch(300, seed=11)
    ours, theirs = (
        coco_rouge_l_batch(hypotheses, references, beta=beta),
        coco_rouge(hypotheses, references, beta),
    )
    assert_close([row[2] for row in ours], [row[2] for row in theirs])


# --- CIDEr-D groups: several systems answering the same contexts ------------------------------------------


def systems_batch(
    systems: int, contexts: int, seed: int
) -> tuple[list[str], list[list[str]], list[str], list[int]]:
    """(hypotheses, references, groups, system of each item), items ordered context by context."""
    rng = random.Random(seed)
    context_refs = [[random_sentence(rng) for _ in range(rng.randint(1, 4))] for _ in range(contexts)]
    hypotheses, references, groups, system_of = [], [], [], []
    for context, refs in enumerate(context_refs):
        for system in range(systems):
            hypotheses.append(random_sentence(rng))
            shuffled = list(refs)
            rng.shuffle(shuffled)  # the same references, in any order
            references.append(shuffled if system == 2 else refs)
            groups.append(f"context-{context}")
            system_of.append(system)
    return hypotheses, references, groups, system_of


def test_cider_groups_equal_pycocoevalcap_on_each_system_alone() -> None:
    hypotheses, references, groups, system_of = systems_batch(3, 20, seed=3)
    together = coco_cider_d(hypotheses, references, groups=groups)
    for system in range(3):
        items = [i for i, s in enumerate(system_of) if s == system]
        alone = coco_cider([hypotheses[i] for i in items], [references[i] for i in items])
        assert_close([together[i] for i in items], alone)
    # Counting every context once per system changes the idf: the groups are what make these agree.
    ungrouped = coco_cider_d(hypotheses, references)
    assert_close(ungrouped, coco_cider(hypotheses, references))
    assert max(abs(a - b) for a, b in zip(ungrouped, together, strict=True)) > 1e-3


def test_shared_reference_lists_equal_pycocoevalcap() -> None:
    """Items sharing reference lists (the cached paths of BLEU and ROUGE-L) give pycocoevalcap's values."""
    hypotheses, references, _, _ = systems_batch(5, 30, seed=5)
    assert_all_equal_coco(hypotheses, references)


def test_cider_groups_none_is_one_group_per_item() -> None:
    hypotheses, references = random_batch(100, seed=9)
    assert coco_cider_d(hypotheses, references, groups=list(range(100))) == coco_cider_d(
        hypotheses, references
    )


def test_cider_group_with_other_references_is_refused() -> None:
    with pytest.raises(ValueError, match="items 0 and 2 share the group 'c'"):
        coco_cider_d(["a", "b", "c"], [["x y"], ["z"], ["x"]], groups=["c", "d", "c"])


# --- argument checks -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda refs: coco_sentence_bleu_batch(["a", "b"], refs, [4]),
        lambda refs: coco_corpus_bleu(["a", "b"], refs),
        lambda refs: coco_rouge_l_batch(["a", "b"], refs),
        lambda refs: coco_cider_d(["a", "b"], refs),
    ],
    ids=["sentence bleu", "corpus bleu", "rouge-l", "cider-d"],
)
def test_item_without_references_is_refused_by_index(call) -> None:
    with pytest.raises(ValueError, match="item 1 has no reference"):
        call([["a"], []])


@pytest.mark.parametrize("orders", [[], [0], [5], [1, 5]])
def test_bleu_orders_outside_one_to_four_are_refused(orders: list[int]) -> None:
    with pytest.raises(ValueError, match="order"):
        coco_sentence_bleu_batch(["a"], [["a"]], orders)


def test_empty_batch() -> None:
    assert coco_sentence_bleu_batch([], [], [1, 4]) == []
    assert coco_rouge_l_batch([], []) == []
    assert coco_cider_d([], []) == []
    corpus, _ = coco_bleu([], [])
    assert_close(coco_corpus_bleu([], []), corpus)


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="2 hypotheses but 1 reference lists"):
        coco_rouge_l_batch(["a", "b"], [["a"]])


# --- real dialog pairs -----------------------------------------------------------------------------------


@pytest.mark.shared_data
def test_dailydialog_pairs_equal_pycocoevalcap() -> None:
    batch = dailydialog_batch()
    assert len(batch) > 6000
    assert_all_equal_coco(
        list(batch.hypotheses), [list(refs) for refs in batch.references], limit=REAL_DATA_TESTER_ITEMS
    )


@pytest.mark.shared_data
def test_dailydialog_multireference_equal_pycocoevalcap() -> None:
    """multirefeval's five references per DailyDialog context (raw, with their doubled spaces), the
    hypothesis being the original reply of the next context."""
    if not MULTIREF_TEST.is_file():
        pytest.skip(f"real-data check skipped: {MULTIREF_TEST} is not present")
    contexts = []
    for line in MULTIREF_TEST.read_text(encoding="utf-8").splitlines():
        for turn in json.loads(line)["dialogue"]:
            responses = [text.strip() for text in turn.get("responses") or []]
            if responses:
                contexts.append(responses)
    contexts = contexts[:2000]
    hypotheses = [contexts[(index + 1) % len(contexts)][0] for index in range(len(contexts))]
    assert any("  " in text for refs in contexts for text in refs)
    assert_all_equal_coco(hypotheses, contexts, limit=REAL_DATA_TESTER_ITEMS)
