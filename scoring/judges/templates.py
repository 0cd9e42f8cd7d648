"""Prompt templates a researcher may use: the recipes shipped, and the researcher's own (copies to edit)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction

from scoring.metrics.llm_judge.prompts import PromptTemplate, TemplateError
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.models import JudgeTemplate


class TemplateLookupError(ValueError):
    """A template name that is neither shipped nor the researcher's own."""


def prompt_template(row: JudgeTemplate) -> PromptTemplate:
    return PromptTemplate(
        name=row.name,
        system=row.system,
        user=row.user,
        answer_prefix=row.answer_prefix,
        pairwise=row.pairwise,
        description=row.description,
    )


def templates_for(user: User | AnonymousUser | None) -> dict[str, PromptTemplate]:
    """The templates ``user`` may use by name: the shipped recipes, then their own (an own template may not
    take a recipe's name)."""
    found = dict(BUILT_IN_TEMPLATES)
    if user is not None and user.is_authenticated:
        for row in JudgeTemplate.objects.filter(owner=user):
            found[row.name] = prompt_template(row)
    return found


def template_named(name: str, user: User | AnonymousUser | None) -> PromptTemplate:
    found = templates_for(user)
    if name not in found:
        raise TemplateLookupError(f"no prompt template {name!r}; the templates: {', '.join(found)}")
    return found[name]


@transaction.atomic
def judge_template_save(
    *,
    owner: User,
    name: str,
    user: str,
    system: str = "",
    answer_prefix: str = "",
    pairwise: bool = False,
    description: str = "",
) -> JudgeTemplate:
    """Create or replace the owner's template ``name``; a TemplateError naming the field, line and column
    of what is wrong (nothing saved then). A recipe's name is refused: copy it under a new name."""
    if name in BUILT_IN_TEMPLATES:
        raise TemplateError(f"name: {name!r} is a shipped recipe; save your copy under another name")
    template = PromptTemplate(name, system, user, answer_prefix, pairwise, description)
    template.check()
    row, _ = JudgeTemplate.objects.update_or_create(
        owner=owner,
        name=name,
        defaults={
            "system": system,
            "user": user,
            "answer_prefix": answer_prefix,
            "pairwise": pairwise,
            "description": description,
            "content_hash": template.content_hash(),
        },
    )
    return row
