"""The labels of a scale, the reading of their probabilities, and the templates' checks and split (no model)."""

from __future__ import annotations

import math

import pytest

from scoring.metrics.llm_judge.parts import prompt_parts, shared_prefix
from scoring.metrics.llm_judge.prompts import JudgeItem, JudgeQuestion, PromptTemplate, TemplateError
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES, RATING_TEMPLATES
from scoring.metrics.llm_judge.scale import JudgeScale, label_probabilities, reading
from scoring.metrics.llm_judge.server_client import formatted


def test_digit_scales_answer_with_their_points() -> None:
    scale = JudgeScale(0, 2, ("bad", "borderline", "good"))
    assert scale.labels == ("0", "1", "2")
    assert scale.values == (0.0, 1.0, 2.0)
    assert scale.described() == "0 (bad), 1 (borderline), 2 (good)"
    assert JudgeScale(1, 5).labels == ("1", "2", "3", "4", "5")


def test_scales_with_a_point_of_two_characters_answer_with_letters() -> None:
    scale = JudgeScale(0, 10)
    assert scale.labels == tuple("ABCDEFGHIJK")
    assert scale.values == tuple(float(point) for point in range(11))
    assert scale.described().startswith("A = 0, B = 1")
    assert JudgeScale(-1, 1).labels == ("A", "B", "C")


def test_a_slider_is_asked_on_nine_points_read_back_onto_its_range() -> None:
    scale = JudgeScale(0, 100, ("not at all", "completely"), slider=True)
    assert scale.labels == tuple("123456789")
    assert scale.values[0] == 0
    assert scale.values[-1] == 100
    assert scale.values[4] == 50
    assert scale.described() == "1 (not at all) to 9 (completely)"
    assert scale.code == "0-100~"


def test_reading_is_the_expectation_over_labels_renormalised() -> None:
    result = reading([1, 2, 3], [0.1, 0.2, 0.1])
    assert result.mass == pytest.approx(0.4)
    assert result.expected == pytest.approx((1 * 0.1 + 2 * 0.2 + 3 * 0.1) / 0.4)
    assert result.likeliest == 2
    assert math.fsum(result.probabilities) == pytest.approx(1.0)


def test_no_mass_on_any_label_reads_as_no_value() -> None:
    result = reading([0, 1, 2], [0.0, 0.0, 0.0])
    assert result.expected is None
    assert result.likeliest is None
    assert result.mass == 0.0


def test_a_tie_between_labels_reads_the_lowest() -> None:
    assert reading([0, 1, 2], [0.3, 0.3, 0.1]).likeliest == 0


def test_label_probabilities_sum_the_tokens_that_read_as_a_label() -> None:
    tokens = {"3": 0.2, " 3": 0.1, "3 ": 0.05, "30": 0.3, "A": 0.1, "\n3": 0.4}
    assert label_probabilities(["2", "3"], tokens) == [0.0, pytest.approx(0.35)]


def _template(**changes: object) -> PromptTemplate:
    fields: dict[str, object] = {
        "name": "t",
        "system": "Judge.",
        "user": "{context}\n{reply}",
        "answer_prefix": "Score: ",
    }
    fields.update(changes)
    return PromptTemplate(**fields)  # type: ignore[arg-type]


def test_an_unknown_placeholder_is_named_with_its_line_and_column() -> None:
    with pytest.raises(TemplateError, match=r"user, line 2, column 3: unknown placeholder \{answer\}"):
        _template(user="{context}\n: {answer}\n{reply}").check()


def test_a_lone_brace_is_refused_and_a_doubled_one_is_a_brace() -> None:
    with pytest.raises(TemplateError, match=r"user:.*brace"):
        _template(user="{reply} {").check()
    _system, _user, prefix = _template(answer_prefix='{{"score": ').messages(
        JudgeQuestion("q", "", JudgeScale(0, 2)), JudgeItem(("hi",), "hello")
    )
    assert prefix == '{"score": '


def test_an_item_placeholder_outside_the_user_message_is_refused() -> None:
    with pytest.raises(
        TemplateError, match=r"system, line 1, column 8: \{reply\} belongs in the user message"
    ):
        _template(system="Judge: {reply}").check()


def test_a_template_that_never_shows_the_reply_is_refused() -> None:
    with pytest.raises(TemplateError, match=r"never shows \{reply\}"):
        _template(user="{context}").check()
    with pytest.raises(TemplateError, match=r"never shows \{reply_a\}, \{reply_b\}"):
        _template(pairwise=True, user="{context}").check()


def test_the_hash_follows_the_texts_not_the_name() -> None:
    assert _template().content_hash() == _template(name="other", description="x").content_hash()
    assert _template().content_hash() != _template(user="{context}\n\n{reply}").content_hash()
    assert _template().content_hash() != _template(answer_prefix="Score:").content_hash()


def test_the_shipped_recipes_are_valid_and_distinct() -> None:
    for template in BUILT_IN_TEMPLATES.values():
        template.check()
    assert len({template.content_hash() for template in BUILT_IN_TEMPLATES.values()}) == len(
        BUILT_IN_TEMPLATES
    )
    assert set(RATING_TEMPLATES) == {"g-eval", "llm-eval", "single-answer"}


QUESTION = JudgeQuestion(
    "appropriateness",
    "How appropriate is the reply?",
    JudgeScale(1, 5),
    qualities=(("appropriateness", "How appropriate is the reply?"), ("engagingness", "How engaging?")),
)
ITEMS = [
    JudgeItem(("Hi.", "Hello, how are you?"), "Fine, thanks."),
    JudgeItem(("Where is the station?",), "Bananas are yellow.", ("Two blocks north.",)),
    JudgeItem(("A: {not a placeholder}",), "I {also} have braces."),
]


@pytest.mark.parametrize("name", RATING_TEMPLATES)
def test_every_prompt_is_its_shared_prefix_then_its_own_part(name: str) -> None:
    template = BUILT_IN_TEMPLATES[name]

    def chatml(system: str, user: str, prefix: str) -> str:
        return formatted("chatml", system, user, prefix)

    parts = prompt_parts(template, QUESTION, ITEMS, chatml)
    prefix = shared_prefix(template, QUESTION, chatml)
    assert prefix
    assert all(part.prefix == prefix for part in parts)
    for part, item in zip(parts, ITEMS, strict=True):
        assert part.prefix + part.own == chatml(*template.messages(QUESTION, item))
    assert "{also}" in parts[2].own  # user text is never read as placeholders


def test_the_context_alternates_speakers_ending_with_a() -> None:
    _system, user, prefix = BUILT_IN_TEMPLATES["g-eval"].messages(QUESTION, ITEMS[0])
    assert "B: Hi.\nA: Hello, how are you?" in user
    assert "B: Fine, thanks." in user
    assert prefix == "- appropriateness: "


def test_llm_eval_lists_every_quality_and_references_show_none_when_absent() -> None:
    _, user, prefix = BUILT_IN_TEMPLATES["llm-eval"].messages(QUESTION, ITEMS[0])
    assert "- appropriateness: How appropriate is the reply?\n- engagingness: How engaging?" in user
    assert prefix == '{"appropriateness": '
    values = _template(user="{reply}\n{references}").messages(QUESTION, ITEMS[0])[1]
    assert values.endswith("(none)")
