"""Prompt templates a researcher may use: the recipes shipped, and the researcher's own (copies to edit).

A researcher sees, uses, edits and deletes only their own templates (and the shipped ones, read-only). A
judge a run asked for keeps its template's text (``JudgeRecord``), so editing or deleting a template
changes no stored score: an edited template is another judge, with another key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction

from scoring.metrics.llm_judge.prompts import PromptTemplate, TemplateError
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.models import JudgeTemplate

TEMPLATE_FIELDS = ("name", "description", "system", "user", "answer_prefix", "pairwise")


class TemplateLookupError(ValueError):
    """A template name that is neither shipped nor the researcher's own."""


def template_error_field(error: ValueError) -> str:
    """The field a :class:`TemplateError` is about (its message starts with it), "" when none."""
    head = str(error).split(":", 1)[0].split(",", 1)[0].strip()
    return head if head in TEMPLATE_FIELDS else ""


@dataclass(frozen=True)
class TemplateEntry:
    """A template as the templates page and the API list it."""

    template: PromptTemplate
    shipped: bool
    updated_at: datetime | None = None

    @property
    def name(self) -> str:
        return self.template.name

    @property
    def content_hash(self) -> str:
        return self.template.content_hash()


def template_entries(user: User) -> list[TemplateEntry]:
    """The shipped recipes, then the user's own templates by name."""
    entries = [TemplateEntry(template, shipped=True) for template in BUILT_IN_TEMPLATES.values()]
    entries += [
        TemplateEntry(prompt_template(row), shipped=False, updated_at=row.updated_at)
        for row in JudgeTemplate.objects.filter(owner=user).order_by("name")
    ]
    return entries


def template_entry(name: str, user: User) -> TemplateEntry | None:
    """The shipped recipe ``name``, else the user's own template of that name, else None (another
    researcher's template is None too)."""
    if name in BUILT_IN_TEMPLATES:
        return TemplateEntry(BUILT_IN_TEMPLATES[name], shipped=True)
    row = JudgeTemplate.objects.filter(owner=user, name=name).first()
    return TemplateEntry(prompt_template(row), False, row.updated_at) if row is not None else None


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
    create: bool = False,
) -> JudgeTemplate:
    """Create or replace the owner's template ``name``; a TemplateError naming the field, line and column
    of what is wrong (nothing saved then). A recipe's name is refused: copy it under a new name. With
    ``create``, a name the owner already uses is refused too (a new template never replaces one)."""
    if name in BUILT_IN_TEMPLATES:
        raise TemplateError(f"name: {name!r} is a shipped recipe; save your copy under another name")
    if create and JudgeTemplate.objects.filter(owner=owner, name=name).exists():
        raise TemplateError(f"name: you already have a template {name!r}; edit it or choose another name")
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


def judge_template_delete(*, owner: User, name: str) -> bool:
    """Delete the owner's template ``name``; whether there was one (stored judges keep their text)."""
    deleted, _ = JudgeTemplate.objects.filter(owner=owner, name=name).delete()
    return bool(deleted)
