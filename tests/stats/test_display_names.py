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
