"""Pairwise comparison items: which of two systems' replies to one context is better.

Pairwise judgments are a common companion of absolute ratings in dialog evaluation (ACUTE-Eval, ChatEval,
Chatbot Arena): a rater who hesitates between "2" and "3" on a scale still sees at once which of two
replies is the better one. A study with ``pairwise_enabled`` gets one work item (kind ``pair``) per pair of
replies of *different* systems to the same context, each reply being the system's first sample
(``sample_index`` 0). The item holds the two replies in canonical order, ``response`` the lower id and
``response_b`` the higher one (a database constraint), and wants ``ratings_per_item`` (k) raters, like a
rating item.

S systems give S(S-1)/2 pairs per context. Above ``MAX_PAIRS_PER_CONTEXT`` (45, every pair of 10
systems) a context gets that many pairs, drawn with a generator seeded by the context id: the choice is
reproducible, and over many contexts every pair of systems comes up about equally often. Pairs already
made are never dropped; a later sync adds pairs only while the context is under the cap.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from itertools import combinations

from django.db.models import F, QuerySet
from django.db.models.functions import Greatest

from annotation.models import Response, Study, WorkItem, WorkKind

MAX_PAIRS_PER_CONTEXT = 45


def context_pairs(
    replies: Iterable[tuple[int, int]], *, context_id: int, limit: int
) -> list[tuple[int, int]]:
    """The pairs ``(lower id, higher id)`` of a context's replies ``(response id, system id)`` written by
    different systems: all of them, or ``limit`` of them chosen with a generator seeded by ``context_id``."""
    ordered = sorted(replies)
    pairs = [
        (first, second)
        for (first, first_system), (second, second_system) in combinations(ordered, 2)
        if first_system != second_system
    ]
    if len(pairs) <= limit:
        return pairs
    return sorted(random.Random(context_id).sample(pairs, max(0, limit)))


def pair_items_sync(*, study: Study, existing: QuerySet[WorkItem]) -> list[WorkItem]:
    """The pair items ``study`` lacks (unsaved; the caller bulk-creates them), after raising or lowering
    ``wanted`` of the existing ones to k (never below what annotators already hold)."""
    k = study.ratings_per_item
    pair_items = existing.filter(kind=WorkKind.PAIR)
    pair_items.exclude(wanted=k).update(wanted=Greatest(k, F("taken")))
    have: set[tuple[int | None, int | None]] = set()
    per_context: dict[int, int] = {}
    for response_id, response_b_id, context_id in pair_items.values_list(
        "response_id", "response_b_id", "context_id"
    ):
        have.add((response_id, response_b_id))
        if context_id is not None:
            per_context[context_id] = per_context.get(context_id, 0) + 1
    by_context: dict[int, list[tuple[int, int]]] = {}
    for response_id, context_id, system_id in Response.objects.filter(
        context__study=study, sample_index=0
    ).values_list("pk", "context_id", "system_id"):
        by_context.setdefault(context_id, []).append((response_id, system_id))
    missing: list[WorkItem] = []
    for context_id, replies in sorted(by_context.items()):
        room = MAX_PAIRS_PER_CONTEXT - per_context.get(context_id, 0)
        if room <= 0:
            continue
        new_pairs = [
            pair
            for pair in context_pairs(replies, context_id=context_id, limit=MAX_PAIRS_PER_CONTEXT)
            if pair not in have
        ]
        missing.extend(
            WorkItem(
                study=study,
                kind=WorkKind.PAIR,
                context_id=context_id,
                response_id=first,
                response_b_id=second,
                wanted=k,
            )
            for first, second in new_pairs[:room]
        )
    return missing
