"""Display names (stats/display_names.py): the metric's name, and only the signature parts that tell it apart."""

from __future__ import annotations

from stats.display_names import DisplayName, display_names

NLTK = "bleu-1|case:lc|impl:nltk|refs:single|smooth:none|tok:en-v1|version:0.1.0"
NLG_EVAL = (
    "bleu-1|case:mixed|impl:nlg-eval|refs:single|smooth:coco-1e-15|tok:split|version:0.1.0+pycocoevalcap-1.2"
)


def _texts(metrics: dict[str, str]) -> dict[str, str]:
    return {signature: name.text for signature, name in display_names(metrics).items()}


def test_a_name_alone_when_it_is_unique() -> None:
    assert _texts({NLTK: "bleu-1", "rouge-l|refs:single|version:0.1.0": "rouge-l"}) == {
        NLTK: "bleu-1",
        "rouge-l|refs:single|version:0.1.0": "rouge-l",
    }


def test_the_tool_tells_two_tools_apart_and_nothing_else_is_shown() -> None:
    assert _texts({NLTK: "bleu-1", NLG_EVAL: "bleu-1"}) == {
        NLTK: "bleu-1 (nltk)",
        NLG_EVAL: "bleu-1 (nlg-eval)",
    }


def test_the_references_then_only_what_each_needs() -> None:
    single = "meteor|refs:single|tok:en-v1|version:0.1.0"
    multi = "meteor|refs:multi|tok:en-v1|version:0.1.0"
    multi_none = "meteor|refs:multi|tok:none|version:0.1.0"
    assert _texts({single: "meteor", multi: "meteor", multi_none: "meteor"}) == {
        single: "meteor (single)",  # the only single one: its references are enough
        multi: "meteor (multi, tok:en-v1)",
        multi_none: "meteor (multi, tok:none)",
    }


def test_models_and_vectors_by_a_short_hash() -> None:
    first = "ruber-referenced|model:3f2a91c0aa55ee11|version:0.1.0"
    second = "ruber-referenced|model:77b0c2d9aa55ee11|version:0.1.0"
    assert _texts({first: "ruber-referenced", second: "ruber-referenced"}) == {
        first: "ruber-referenced (model 3f2a91c0)",
        second: "ruber-referenced (model 77b0c2d9)",
    }
    glove = "embedding-average|artifact:dd88ed3c99|refs:single|vectors:glove-6b-50d|version:0.1.0"
    w2v = "embedding-average|artifact:0a1b2c3d44|refs:single|vectors:dd-word2vec|version:0.1.0"
    assert _texts({glove: "embedding-average", w2v: "embedding-average"}) == {
        glove: "embedding-average (glove-6b-50d)",
        w2v: "embedding-average (dd-word2vec)",
    }


def test_names_that_still_read_alike_are_numbered() -> None:
    names = display_names({"x|a": "x", "x|b": "x"})  # no parameter tells them apart
    assert {name.text for name in names.values()} == {"x (#1)", "x (#2)"}
    assert display_names({"usr": "usr (external)"}) == {"usr": DisplayName("usr (external)")}


def test_every_name_is_unique_whatever_the_signatures() -> None:
    metrics = {
        f"{name}|impl:{impl}|refs:{refs}|tok:{tok}|version:{version}": name
        for name in ("bleu-1", "meteor")
        for impl in ("nltk", "nlg-eval")
        for refs in ("single", "multi")
        for tok in ("en-v1", "none")
        for version in ("0.1.0", "0.2.0")
    }
    texts = list(_texts(metrics).values())
    assert len(set(texts)) == len(texts) == 32


def _judge(key: str, **changed: str) -> str:
    """A judge's signature as scoring writes it (scoring/metrics/llm_judge/definition.py), ``changed`` applied."""
    parameters = {
        "artifact": "5d41402abc4b2a76",
        "backend": "local",
        "model": "smollm2-135m",
        "question": "appropriateness@1a2b3c4d",
        "read": "expectation",
        "reads": "logprobs",
        "scale": "0-2",
        "template": "g-eval@3f2a91c0aa55ee11",
        **changed,
    }
    return (
        f"llm-judge:{key * 16}|" + "|".join(f"{k}:{v}" for k, v in sorted(parameters.items())) + "|version:1"
    )


def _judge_names(*signatures: str) -> dict[str, str]:
    return _texts({signature: signature.split("|")[0] for signature in signatures})


def test_a_judge_is_named_by_its_template_and_model_never_by_its_key() -> None:
    only = _judge("a")
    assert _judge_names(only, NLTK) == {only: "llm-judge (g-eval, smollm2-135m)", NLTK: "bleu-1"}


def test_judges_of_two_questions_and_two_readings_say_which() -> None:
    first, second = _judge("a"), _judge("b", question="engagingness@9e8d7c6b", scale="1-5")
    argmax = _judge("c", read="argmax")
    assert _judge_names(first, second, argmax) == {
        first: "llm-judge (g-eval, smollm2-135m, appropriateness, expectation)",
        second: "llm-judge (g-eval, smollm2-135m, engagingness)",
        argmax: "llm-judge (g-eval, smollm2-135m, appropriateness, argmax)",
    }


def test_a_template_shows_its_hash_only_beside_another_of_its_name() -> None:
    mine, edited = _judge("a"), _judge("b", template="g-eval@77b0c2d9aa55ee11")
    other = _judge("c", template="single-answer@0000aaaa1111bbbb", model="qwen")
    assert _judge_names(mine, edited, other) == {
        mine: "llm-judge (g-eval@3f2a91c0, smollm2-135m)",
        edited: "llm-judge (g-eval@77b0c2d9, smollm2-135m)",
        other: "llm-judge (single-answer, qwen)",
    }
    server = _judge("d", backend="server", model="smollm2-135m", artifact="")
    assert _judge_names(mine, server)[server] == "llm-judge (g-eval, smollm2-135m, server)"
    refiled = _judge("a", artifact="77b0c2d9aa55ee11")  # one judge, its model's file changed
    assert _judge_names(mine, refiled)[refiled] == "llm-judge (g-eval, smollm2-135m, file 77b0c2d9)"


def test_a_pairwise_judge_is_named_as_the_rating_judges_are() -> None:
    """``llm-pairwise:<key>`` by its template and model, never by its key; two pairwise judges by what
    tells them apart, and neither ever mixed with a rating judge of the same model."""
    pairwise = {"template": "pairwise@04203f4cc68553d0", "question": "pairwise@d7688f30", "scale": "A/B/C"}
    only = _judge("a", **pairwise).replace("llm-judge:", "llm-pairwise:")
    rating = _judge("b")
    assert _judge_names(only, rating) == {
        only: "llm-pairwise (pairwise, smollm2-135m)",
        rating: "llm-judge (g-eval, smollm2-135m)",
    }
    other = _judge("c", model="qwen", **pairwise).replace("llm-judge:", "llm-pairwise:")
    assert _judge_names(only, other)[other] == "llm-pairwise (pairwise, qwen)"
