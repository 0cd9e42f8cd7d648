"""Prompt templates of LLM judges: what they may say, the published recipes, and how an item fills one.

A template has a system message, a user message and an answer prefix (the text the judge's reply starts
with, so that the next token is the rating: ``Rating: [[``). Each may use placeholders in braces (a
literal brace is doubled, ``{{``):

- per item: ``{context}`` (the turns, oldest first, one per line as ``A:``/``B:``, the last turn
  ``A``), ``{reply}``, ``{references}`` (one per line after ``- ``, or ``(none)``); a pairwise template has
  ``{reply_a}`` and ``{reply_b}`` instead of ``{reply}``;
- per question: ``{question_name}``, ``{question}`` (what raters are asked), ``{scale}`` (the labels with
  their words, ``0 (bad), 1 (borderline), 2 (good)``), ``{lowest}``, ``{highest}`` (the first and last
  label), ``{qualities}`` (every question of the study, one per line, for a prompt asking all of them as
  LLM-EVAL does, Lin and Chen, 2023).

The template's text is part of the metric's signature (:meth:`PromptTemplate.content_hash`): two prompts
are two metrics. The recipes shipped (:data:`BUILT_IN_TEMPLATES`) follow G-EVAL (Liu et al., 2023),
LLM-EVAL (Lin and Chen, 2023) and the single-answer and pairwise judges of Zheng et al. (2023), adapted to
reading the rating as the next token instead of generating an explanation first.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Sequence
from dataclasses import dataclass, field

from scoring.metrics.llm_judge.scale import JudgeScale

ITEM_PLACEHOLDERS = ("context", "reply", "references")
PAIRWISE_ITEM_PLACEHOLDERS = ("context", "reply_a", "reply_b", "references")
QUESTION_PLACEHOLDERS = ("question_name", "question", "scale", "lowest", "highest", "qualities")
MAX_TEMPLATE_CHARACTERS = 20_000


class TemplateError(ValueError):
    """A template that cannot be rendered; the message names the field, line and column."""


@dataclass(frozen=True)
class JudgeQuestion:
    """What a judge is asked about: the question's name, its text, its scale; ``qualities`` every question
    of the study as (name, text) for ``{qualities}``. A pairwise question has the scale A / B / tie."""

    name: str
    text: str
    scale: JudgeScale
    qualities: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class JudgeItem:
    """One item to judge: the context's turns oldest first, the reply (or the two replies of a pairwise
    item) and the references (possibly none)."""

    context: tuple[str, ...]
    reply: str = ""
    references: tuple[str, ...] = ()
    reply_b: str = ""


@dataclass(frozen=True)
class PromptTemplate:
    """A judge's prompt: ``system`` and ``user`` messages and the ``answer_prefix`` its reply starts with
    (module docstring for the placeholders); ``pairwise`` for a template that compares two replies."""

    name: str
    system: str
    user: str
    answer_prefix: str = ""
    pairwise: bool = False
    description: str = field(default="", compare=False)

    def content_hash(self) -> str:
        """The first 16 hex digits of sha256 over the texts and the kind (not the name or description)."""
        text = json.dumps(
            [self.system, self.user, self.answer_prefix, "pairwise" if self.pairwise else "rating"],
            ensure_ascii=False,
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def check(self) -> None:
        """A :class:`TemplateError` naming the field, line and column of the first problem: a placeholder it
        does not know, a lone brace, a per-item placeholder outside the user message, no reply to judge.
        A template found valid once is not parsed again (every item of a run renders it)."""
        if self not in _VALID:
            self._check()
            _VALID.add(self)

    def _check(self) -> None:
        item_names = self.item_placeholders()
        known = (*item_names, *QUESTION_PLACEHOLDERS)
        used: set[str] = set()
        for field_name, text in (
            ("system", self.system),
            ("user", self.user),
            ("answer_prefix", self.answer_prefix),
        ):
            if len(text) > MAX_TEMPLATE_CHARACTERS:
                raise TemplateError(f"{field_name}: longer than {MAX_TEMPLATE_CHARACTERS} characters")
            for name, offset in _placeholders(field_name, text):
                if name not in known:
                    raise TemplateError(
                        f"{field_name}, {_where(text, offset)}: unknown placeholder {{{name}}}; "
                        f"known: {', '.join('{' + known_name + '}' for known_name in known)}"
                    )
                if name in item_names and field_name != "user":
                    raise TemplateError(
                        f"{field_name}, {_where(text, offset)}: {{{name}}} belongs in the user message "
                        "(the system message and answer prefix are shared by every item)"
                    )
                used.add(name)
        wanted = ("reply_a", "reply_b") if self.pairwise else ("reply",)
        missing = [name for name in wanted if name not in used]
        if missing:
            raise TemplateError(
                f"user: the template never shows {', '.join('{' + name + '}' for name in missing)}"
            )

    def item_placeholders(self) -> tuple[str, ...]:
        return PAIRWISE_ITEM_PLACEHOLDERS if self.pairwise else ITEM_PLACEHOLDERS

    def messages(self, question: JudgeQuestion, item: JudgeItem) -> tuple[str, str, str]:
        """The system message, user message and answer prefix for ``item`` (checked first)."""
        return self.rendered({**question_values(question), **item_values(item, pairwise=self.pairwise)})

    def rendered(self, values: dict[str, str]) -> tuple[str, str, str]:
        """The three texts with ``values`` in their placeholders (checked first)."""
        self.check()
        return (
            self.system.format_map(values),
            self.user.format_map(values),
            self.answer_prefix.format_map(values),
        )


# Templates found valid in this process (immutable and hashed by their texts; a few per run).
_VALID: set[PromptTemplate] = set()


def _placeholders(field_name: str, text: str) -> list[tuple[str, int]]:
    """(name, offset) of every placeholder of ``text``; a TemplateError for a lone or malformed brace."""
    found = []
    offset = 0
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as error:
        raise TemplateError(f"{field_name}: {error} (write a literal brace twice: {{{{ or }}}})") from None
    for literal, name, format_spec, conversion in parsed:
        offset += len(literal.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        if not name.isidentifier() or format_spec or conversion:
            raise TemplateError(
                f"{field_name}, {_where(text, offset)}: {{{name}}} is not a placeholder; "
                "write a literal brace twice ({{ or }})"
            )
        found.append((name, offset))
        offset += len(name) + 2
    return found


def _where(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def question_values(question: JudgeQuestion) -> dict[str, str]:
    labels = question.scale.labels
    qualities = question.qualities or ((question.name, question.text),)
    return {
        "question_name": question.name,
        "question": question.text,
        "scale": question.scale.described(),
        "lowest": labels[0],
        "highest": labels[-1],
        "qualities": "\n".join(f"- {name}: {text}" if text else f"- {name}" for name, text in qualities),
    }


def item_values(item: JudgeItem, *, pairwise: bool) -> dict[str, str]:
    values = {"context": context_text(item.context), "references": references_text(item.references)}
    if pairwise:
        values.update(reply_a=item.reply, reply_b=item.reply_b)
    else:
        values["reply"] = item.reply
    return values


def context_text(turns: Sequence[str]) -> str:
    """The turns oldest first, one per line, speakers alternating so that the last turn is ``A``'s (the
    reply judged is ``B``'s)."""
    count = len(turns)
    return "\n".join(
        f"{'A' if (count - 1 - index) % 2 == 0 else 'B'}: {turn}" for index, turn in enumerate(turns)
    )


def references_text(references: Sequence[str]) -> str:
    return "\n".join(f"- {reference}" for reference in references) if references else "(none)"
