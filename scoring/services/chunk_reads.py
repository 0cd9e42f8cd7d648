"""Reading a chunk's replies with their context and references, as plain rows.

A chunk's few queries cost more than some metrics: the replies and their references are read with plain
SQL in one statement each (per slice of ids over the bind-parameter limit), and the references of one
context are shared by its replies, so the metrics tokenize and prepare them once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from django.db import connection

from annotation.models import DialogContext, Reference, Response
from scoring.metrics.registry import (
    metric_spec,
)
from scoring.models import (
    ScoringRun,
)
from scoring.services.references_policy import references_for_mode


def items_and_references(
    response_ids: Sequence[int], names: Sequence[str], run: ScoringRun
) -> tuple[list[ReplyItem], list[list[str]]]:
    """The replies to score with their references for the run's mode; only those with a reference when a
    metric needs one."""
    return with_references(reply_items(response_ids), names, run)


def with_references(
    items: list[ReplyItem], names: Sequence[str], run: ScoringRun
) -> tuple[list[ReplyItem], list[list[str]]]:
    """``items`` with their references for the run's mode; only those with a reference when one of
    ``names`` needs one."""
    # once per context: the replies of one context share the list, which lets the metrics tokenize and
    # prepare those references once
    by_context: dict[int, list[str]] = {}
    for item in items:
        if item.context_id not in by_context:
            by_context[item.context_id] = references_for_mode(item.references, run.references)
    references = [by_context[item.context_id] for item in items]
    if any(metric_spec(name).needs_references for name in names):
        kept = [index for index, refs in enumerate(references) if refs]
        items, references = [items[index] for index in kept], [references[index] for index in kept]
    return items, references


class ReferenceRow(NamedTuple):
    pk: int
    text: str
    origin: str


class ReplyItem(NamedTuple):
    pk: int
    text: str
    query: str
    references: list[ReferenceRow]
    context: tuple[str, ...]  # every turn, oldest first (context-aware metrics: MaUde)
    context_id: int


def reply_items(response_ids: Sequence[int]) -> list[ReplyItem]:
    """The chunk's replies in its order, with their query and references, read as plain rows in two
    statements (one per slice of ids over the bind-parameter limit); deleted replies are gone.

    Plain SQL rather than the ORM: a chunk's few queries cost more than some metrics, and most of it
    was the ORM preparing each of the chunk's ids for its ``IN`` list and building rows."""
    responses, contexts, references_table = _table(Response), _table(DialogContext), _table(Reference)
    rows: dict[int, tuple[str, int, Any]] = {}
    for part, marks in _id_slices(response_ids):
        for pk, text, context_id, turns in _fetch(
            f"SELECT r.id, r.text, r.context_id, c.turns FROM {responses} r "
            f"INNER JOIN {contexts} c ON c.id = r.context_id WHERE r.id IN ({marks})",
            part,
        ):
            rows[pk] = (text, context_id, turns)
    references: dict[int, list[ReferenceRow]] = {}
    found: list[tuple[int, int, str, str]] = []
    for part, marks in _id_slices(sorted({row[1] for row in rows.values()})):
        found += _fetch(
            f"SELECT context_id, id, text, origin FROM {references_table} WHERE context_id IN ({marks})", part
        )
    for context_id, pk, text, origin in sorted(found, key=lambda row: row[1]):  # by id, as the page lists
        references.setdefault(context_id, []).append(ReferenceRow(pk, text, origin))
    items = []
    for pk in response_ids:
        if pk in rows:
            text, context_id, turns = rows[pk]
            if isinstance(turns, (str, bytes)):  # SQLite, and PostgreSQL as Django reads jsonb: JSON text
                turns = json.loads(turns)
            context = tuple(str(turn["text"]) for turn in turns or [])
            query = context[-1] if context else ""  # DialogContext.query: the last turn
            items.append(ReplyItem(pk, text, query, references.get(context_id, []), context, context_id))
    return items


def _table(model: type[Any]) -> str:
    return str(connection.ops.quote_name(model._meta.db_table))


def _id_slices(ids: Sequence[int]) -> list[tuple[list[int], str]]:
    """``ids`` in slices that fit one statement's bind parameters, each with its ``%s, %s, ...`` marks."""
    per_statement = max(1, bind_parameter_limit() - 10)
    slices = []
    for start in range(0, len(ids), per_statement):
        part = [int(pk) for pk in ids[start : start + per_statement]]
        slices.append((part, ", ".join(["%s"] * len(part))))
    return slices


def _fetch(sql: str, parameters: Sequence[Any]) -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute(sql, parameters)
        return list(cursor.fetchall())


def bind_parameter_limit() -> int:
    """How many parameters one statement may bind: SQLite's compiled-in limit (999 on old builds, 32,766 or
    more on recent ones; Django's feature flag always says 999), else PostgreSQL's 65,535."""
    if connection.vendor == "sqlite":
        import sqlite3

        connection.ensure_connection()
        raw = connection.connection
        if hasattr(raw, "getlimit"):  # Python 3.11+
            return int(raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
        return int(connection.features.max_query_params or 999)
    return int(connection.features.max_query_params or 65_535)
