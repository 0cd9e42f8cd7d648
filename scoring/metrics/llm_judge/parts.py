"""An item's prompt split into the prefix every item of a question shares and the item's own part.

The split is found once per question by formatting the prompt with a marker in place of every per-item
placeholder: the prefix is the formatted text before the first marker (the chat template's header, the
system message, the instructions, the question and its scale). Each item's formatted prompt must start
with that prefix; one that does not (a chat template that reads the items) is given the empty prefix, so
the split never changes what the model reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scoring.metrics.llm_judge.local_model import PromptParts
from scoring.metrics.llm_judge.prompts import (
    JudgeItem,
    JudgeQuestion,
    PromptTemplate,
    item_values,
    question_values,
)

# (system, user, answer prefix) -> the text the model reads
Formatter = Callable[[str, str, str], str]
_MARKER = "\u241e{name}\u241e"  # a character no prompt of the shipped recipes holds


def shared_prefix(template: PromptTemplate, question: JudgeQuestion, formatted: Formatter) -> str:
    """The formatted prompt's text before its first per-item placeholder."""
    markers = {name: _MARKER.format(name=name) for name in template.item_placeholders()}
    text = formatted(*template.rendered({**question_values(question), **markers}))
    first = min((text.find(marker) for marker in markers.values() if marker in text), default=len(text))
    return text[:first]


def prompt_parts(
    template: PromptTemplate, question: JudgeQuestion, items: Sequence[JudgeItem], formatted: Formatter
) -> list[PromptParts]:
    """Each item's prompt as (shared prefix, own part)."""
    prefix = shared_prefix(template, question, formatted)
    parts = []
    for item in items:
        values = {**question_values(question), **item_values(item, pairwise=template.pairwise)}
        text = formatted(*template.rendered(values))
        parts.append(
            PromptParts(prefix, text[len(prefix) :]) if text.startswith(prefix) else PromptParts("", text)
        )
    return parts
