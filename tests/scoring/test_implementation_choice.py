"""A run's choice of implementations: its spelling, its canonical text, what it means for each
metric, what "all" takes under it, and which options it lets a run set.

Pure: the registry's real specs and :mod:`scoring.metrics.implementation_choice`; no database, nothing computed.
"""

from __future__ import annotations

import pytest

from scoring.metrics import registry
from scoring.metrics.implementation_choice import ImplementationChoice, ImplementationChoiceError
from scoring.metrics.registry import (
    available_metric_names,
    available_system_metric_names,
    checked_run_options,
    implementation_choice,
    implementation_groups,
    implementation_names,
    included_by_choice,
    resolve_implementations,
)


def _spec(name: str) -> registry.MetricSpec | registry.SystemMetricSpec:
    return (
        registry.metric_spec(name) if name in available_metric_names() else registry.system_metric_spec(name)
    )


def _every_name() -> list[str]:
    return [*available_metric_names(), *available_system_metric_names()]


def _with_implementations() -> list[str]:
    return [name for name in _every_name() if _spec(name).implementations]


def _one_way_only() -> list[str]:
    return [name for name in _every_name() if not _spec(name).implementations]


def _meaning(choice: ImplementationChoice) -> dict[str, str]:
    """What a choice does to every metric: its implementation, or the error's text."""
    meaning = {}
    for name in _every_name():
        try:
            meaning[name] = choice.for_spec(_spec(name))
        except ImplementationChoiceError as error:
            meaning[name] = f"error: {error}"
    return meaning


# --- spelling and canonical text ---------------------------------------------------------------------------

SAME_CHOICE = [
    pytest.param(["", "default", None, "   ", ",", " , "], id="default"),
    pytest.param(
        ["nlg-eval", " nlg-eval ", "*=nlg-eval", "nlg-eval,nlg-eval", "nlg-eval,*=nlg-eval"], id="everywhere"
    ),
    pytest.param(
        [
            "bleu=sacrebleu,meteor=nlg-eval",
            "meteor=nlg-eval,bleu=sacrebleu",
            " meteor = nlg-eval , bleu = sacrebleu ",
            "bleu=sacrebleu,meteor=nlg-eval,bleu=sacrebleu",
            ",bleu=sacrebleu,,meteor=nlg-eval,",
        ],
        id="per-family",
    ),
    pytest.param(
        ["*=nlg-eval,bleu=sacrebleu", "bleu=sacrebleu,*=nlg-eval", "bleu=sacrebleu,nlg-eval"],
        id="everywhere-but-one",
    ),
    # a family given the implementation every family gets is no different from the bare name
    pytest.param(
        ["nlg-eval", "*=nlg-eval,meteor=nlg-eval", "meteor=nlg-eval,nlg-eval"], id="redundant-family"
    ),
]


@pytest.mark.parametrize("spellings", SAME_CHOICE)
def test_spellings_of_one_choice_give_one_canonical_text(spellings: list[str | None]) -> None:
    choices = [implementation_choice(spelling) for spelling in spellings]
    texts = {choice.text for choice in choices}
    assert len(texts) == 1, texts
    # and they mean the same thing for every metric, which is why they may share a text
    meanings = [_meaning(choice) for choice in choices]
    assert all(meaning == meanings[0] for meaning in meanings)


@pytest.mark.parametrize(
    "text", ["", "nlg-eval", "sacrebleu", "bleu=sacrebleu,meteor=nlg-eval", "*=nlg-eval,bleu=sacrebleu"]
)
def test_the_canonical_text_reads_back_as_the_same_choice(text: str) -> None:
    choice = implementation_choice(text)
    assert choice.text == text
    again = implementation_choice(choice.text)
    assert again == choice


def test_different_choices_have_different_texts() -> None:
    spellings = [
        "",
        "nltk",
        "nlg-eval",
        "bleu=sacrebleu",
        "bleu=sacrebleu,meteor=nlg-eval",
        "*=nlg-eval,bleu=sacrebleu",
    ]
    texts = [implementation_choice(spelling).text for spelling in spellings]
    assert len(set(texts)) == len(texts), texts
    meanings = [tuple(sorted(_meaning(implementation_choice(spelling)).items())) for spelling in spellings]
    assert len(set(meanings)) == len(meanings)


def test_the_default_choice_is_empty_and_gives_each_metric_its_default() -> None:
    default = implementation_choice("default")
    assert default == ImplementationChoice()
    assert default.text == ""
    assert resolve_implementations(["bleu-4", "meteor", "rouge-l", "corpus-bleu"], default) == {
        "bleu-4": "nltk",
        "meteor": "nltk",
        "rouge-l": "nltk",
        "corpus-bleu": "nltk",
    }
    # a metric that only other tools define is computed by one of them, not refused
    assert resolve_implementations(["cider-d", "chrf", "rouge-lsum"], "") == {
        "cider-d": "nlg-eval",
        "chrf": "sacrebleu",
        "rouge-lsum": "rouge-score",
    }


def test_the_known_names_are_every_implementation_and_family_the_specs_declare() -> None:
    declared = {impl for name in _with_implementations() for impl in _spec(name).implementations}
    assert set(implementation_names()) == declared
    assert implementation_names()[0] == "nltk"
    assert set(implementation_groups()) == {_spec(name).group_name for name in _with_implementations()}
    assert {"bleu", "rouge", "meteor", "embedding", "cider-d", "chrf"} <= set(implementation_groups())


# --- refused spellings ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["nltk,nlg-eval", "*=nltk,*=sacrebleu", "nlg-eval,*=rouge-score"])
def test_two_implementations_for_every_family_are_a_conflict(text: str) -> None:
    with pytest.raises(ImplementationChoiceError) as raised:
        implementation_choice(text)
    message = str(raised.value)
    assert message.startswith("implementation: ")
    given = [part.partition("=")[2] or part for part in text.split(",")]
    assert all(repr(name) in message for name in given), message
    assert "every family" in message


def test_one_family_given_two_implementations_is_a_conflict_naming_both() -> None:
    with pytest.raises(ImplementationChoiceError) as raised:
        implementation_choice("bleu=nltk,meteor=nlg-eval,bleu=sacrebleu")
    message = str(raised.value)
    assert "'bleu'" in message
    assert "'nltk'" in message
    assert "'sacrebleu'" in message


@pytest.mark.parametrize("text", ["nlgeval", "bleu=moses", "*=coco", "bleu="])
def test_an_unknown_implementation_is_refused_naming_every_known_one(text: str) -> None:
    with pytest.raises(ImplementationChoiceError) as raised:
        implementation_choice(text)
    message = str(raised.value)
    assert message.startswith("implementation: unknown implementation ")
    unknown = text.partition("=")[2] if "=" in text else text
    assert repr(unknown) in message
    for known in implementation_names():
        assert known in message


@pytest.mark.parametrize("family", ["blue", "bleu-4", "distinct", "ruber", ""])
def test_an_unknown_family_is_refused_naming_the_families(family: str) -> None:
    with pytest.raises(ImplementationChoiceError) as raised:
        implementation_choice(f"{family}=nltk")
    message = str(raised.value)
    assert f"{family!r} is not a metric family with implementations" in message
    for group in implementation_groups():
        assert group in message


# --- what a choice means for one metric ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "metric"),
    [
        ("nltk", "cider-d"),
        ("nltk", "chrf"),
        ("sacrebleu", "meteor"),
        ("rouge-score", "bleu-4"),
        ("nltk", "rouge-lsum"),
    ],
)
def test_a_metric_lacking_the_chosen_implementation_is_an_error_naming_the_ones_it_has(
    choice: str, metric: str
) -> None:
    spec = _spec(metric)
    with pytest.raises(ImplementationChoiceError) as raised:
        implementation_choice(choice).for_spec(spec)
    message = str(raised.value)
    assert f"{metric} has no {choice} implementation" in message
    for offered in spec.implementations:
        assert offered in message.partition("it has: ")[2]
    assert choice not in message.partition("it has: ")[2].partition(")")[0]
    # and the way out: choose per family
    assert f"{spec.group_name}=" in message
    # resolve_implementations raises the same for a run's metrics
    with pytest.raises(ImplementationChoiceError):
        resolve_implementations(["bleu-1", metric], choice)


def test_a_per_family_choice_applies_to_its_family_only() -> None:
    resolved = resolve_implementations(
        ["bleu-2", "corpus-bleu", "meteor", "rouge-l", "embedding-average", "distinct-2"],
        "bleu=sacrebleu,meteor=nlg-eval",
    )
    assert resolved == {
        "bleu-2": "sacrebleu",
        "corpus-bleu": "sacrebleu",  # corpus BLEU belongs to the bleu family
        "meteor": "nlg-eval",
        "rouge-l": "nltk",
        "embedding-average": "nltk",
    }  # distinct-2 is computed one way only: no entry


def test_everywhere_but_one_family() -> None:
    resolved = resolve_implementations(
        ["bleu-4", "meteor", "cider-d", "rouge-l"], "*=nlg-eval,bleu=sacrebleu"
    )
    assert resolved == {
        "bleu-4": "sacrebleu",
        "meteor": "nlg-eval",
        "cider-d": "nlg-eval",
        "rouge-l": "nlg-eval",
    }


def test_a_metric_computed_one_way_only_takes_no_implementation_under_any_choice() -> None:
    for text in ["", "nltk", "nlg-eval", "*=sacrebleu,meteor=nlg-eval"]:
        choice = implementation_choice(text)
        for name in _one_way_only():
            assert choice.for_spec(_spec(name)) == ""
            assert choice.includes(_spec(name))


# --- what "all" takes ----------------------------------------------------------------------------------------


def _all_under(text: str) -> set[str]:
    return {name for name in _every_name() if included_by_choice(name, text)}


@pytest.mark.parametrize("text", ["", "nltk"])
def test_all_under_nltk_leaves_out_what_nltk_lacks(text: str) -> None:
    taken = _all_under(text)
    for left_out in ["cider-d", "chrf", "chrf++", "corpus-chrf", "rouge-lsum", "rouge-l-precision"]:
        assert left_out not in taken
    for kept in ["bleu-1", "bleu-4", "rouge-l", "meteor", "embedding-average", "corpus-bleu"]:
        assert kept in taken
    assert set(_one_way_only()) <= taken
    # exactly: the metrics with an nltk implementation, and those computed one way only
    assert taken == {name for name in _every_name() if "nltk" in _spec(name).implementations} | set(
        _one_way_only()
    )


def test_all_under_nlg_eval_takes_cider_d_and_leaves_out_chrf() -> None:
    taken = _all_under("nlg-eval")
    for kept in [
        "cider-d",
        "bleu-4",
        "meteor",
        "rouge-l",
        "rouge-l-precision",
        "greedy-matching",
        "corpus-bleu",
    ]:
        assert kept in taken
    for left_out in ["chrf", "chrf++", "corpus-chrf", "corpus-chrf++", "rouge-lsum"]:
        assert left_out not in taken
    assert set(_one_way_only()) <= taken


def test_all_under_a_per_family_choice_takes_each_familys_members_of_that_tool() -> None:
    taken = _all_under("*=nlg-eval,chrf=sacrebleu,rouge=rouge-score")
    assert {"chrf", "chrf++", "corpus-chrf", "rouge-lsum", "rouge-l", "cider-d"} <= taken
    # an implementation chosen for every family whose members have it: nothing is refused later
    resolve_implementations(
        sorted(taken & set(_with_implementations())), "*=nlg-eval,chrf=sacrebleu,rouge=rouge-score"
    )


# --- options -------------------------------------------------------------------------------------------------


def test_options_the_chosen_implementations_take_are_returned_as_text() -> None:
    names = ["bleu-4", "corpus-bleu", "rouge-l", "embedding-average"]
    chosen = resolve_implementations(names, "bleu=sacrebleu,rouge=rouge-score")
    assert checked_run_options(names, chosen, {"tok": "intl", "stem": "yes", "oov": "mean"}) == {
        "oov": "mean",
        "stem": "yes",
        "tok": "intl",
    }
    assert checked_run_options(names, chosen, {}) == {}


def test_an_option_no_chosen_implementation_takes_is_refused_naming_those_they_take() -> None:
    names = ["bleu-4", "rouge-l"]
    chosen = resolve_implementations(names, "")  # nltk's: smooth and refagg for BLEU, nothing for ROUGE-L
    with pytest.raises(ImplementationChoiceError) as raised:
        checked_run_options(names, chosen, {"stem": "yes"})
    message = str(raised.value)
    assert message.startswith("option 'stem' applies to none of the chosen metrics' implementations")
    assert "refagg, smooth" in message


def test_options_for_metrics_computed_one_way_only_are_refused() -> None:
    with pytest.raises(ImplementationChoiceError) as raised:
        checked_run_options(["distinct-1"], {}, {"tok": "intl"})
    assert "(options they take: none)" in str(raised.value)


@pytest.mark.parametrize(
    ("choice", "names", "options", "owner", "values"),
    [
        (
            "sacrebleu",
            ["bleu-2"],
            {"tok": "moses"},
            "sacrebleu's bleu",
            ("13a", "intl", "zh", "none", "char"),
        ),
        (
            "sacrebleu",
            ["bleu-2"],
            {"smooth": "method1"},
            "sacrebleu's bleu",
            ("exp", "floor", "add-k", "none"),
        ),
        ("", ["bleu-2"], {"smooth": "exp"}, "nltk's bleu", tuple(f"method{i}" for i in range(8))),
        ("rouge-score", ["rouge-l"], {"stem": "porter"}, "rouge-score's rouge", ("no", "yes")),
        ("nlg-eval", ["greedy-matching"], {"oov": "zero"}, "nlg-eval's embedding", ("skip", "mean")),
        ("sacrebleu", ["chrf"], {"case": "upper"}, "sacrebleu's chrf", ("mixed", "lc")),
    ],
)
def test_a_value_the_implementation_does_not_accept_is_refused_naming_it_and_the_choices(
    choice: str, names: list[str], options: dict[str, str], owner: str, values: tuple[str, ...]
) -> None:
    chosen = resolve_implementations(names, choice)
    with pytest.raises(ImplementationChoiceError) as raised:
        checked_run_options(names, chosen, options)
    message = str(raised.value)
    key, value = next(iter(options.items()))
    assert f"option {key}={value!r} is not accepted by {owner}" in message
    assert message.endswith(f"choose one of {', '.join(values)}")


def test_an_option_must_suit_every_chosen_implementation_that_takes_it() -> None:
    # BLEU by nltk and corpus BLEU by nltk both take smooth, and method3 is one of their values
    names = ["bleu-4", "corpus-bleu"]
    chosen = resolve_implementations(names, "nltk")
    assert checked_run_options(names, chosen, {"smooth": "method3"}) == {"smooth": "method3"}
    # case: sacrebleu's BLEU and chrF take mixed or lc, both
    names = ["bleu-4", "chrf"]
    chosen = resolve_implementations(names, "*=sacrebleu")
    assert checked_run_options(names, chosen, {"case": "lc"}) == {"case": "lc"}
