"""Where an upper app adds to a lower app's pages without the lower app importing it.

The annotation app's study page shows the scoring section (run form, runs, training), and its item browser
shows each reply's metric scores; scoring sits above annotation, so annotation may not import scoring, not
even from a template (``{% load scoring_... %}`` is an import the linter cannot see). Instead an upper app
registers, when Django starts (its ``AppConfig.ready``):

- a *section* of a page slot (``register_section("study-detail", render)``): ``render(context, obj)``
  returns HTML that the page's ``{% page_sections "study-detail" study %}`` places there;
- a *provider* of data by name (``register_provider("reply-metric-scores", provide)``): the page's
  ``{% provided "reply-metric-scores" rows as scores %}`` calls ``provide(rows)``; a slot or name nobody
  registered renders nothing (empty data), so the lower app works alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.safestring import SafeString, mark_safe

SectionRender = Callable[[Any, Any], str]
Provider = Callable[[Any], Any]

_SECTIONS: dict[str, list[SectionRender]] = {}
_PROVIDERS: dict[str, Provider] = {}


def register_section(slot: str, render: SectionRender) -> None:
    """Add ``render(context, obj) -> html`` to the page slot ``slot`` (once per function)."""
    renders = _SECTIONS.setdefault(slot, [])
    if render not in renders:
        renders.append(render)


def register_provider(name: str, provide: Provider) -> None:
    """Make ``provide(argument)`` the data a page asks for by ``name``; a name has one provider."""
    known = _PROVIDERS.get(name)
    if known is not None and known is not provide:
        raise ValueError(f"a provider of {name!r} is registered already")
    _PROVIDERS[name] = provide


def sections(slot: str, context: Any, obj: Any) -> SafeString:
    """Every registered section of ``slot``, rendered in registration order."""
    return mark_safe("".join(render(context, obj) for render in _SECTIONS.get(slot, [])))


def provided(name: str, argument: Any) -> Any:
    """The data ``name``'s provider gives for ``argument`` (None when no app provides it)."""
    provide = _PROVIDERS.get(name)
    return provide(argument) if provide is not None else None
