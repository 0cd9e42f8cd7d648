"""What an annotator is shown for a pairwise item: the context, the study's question, and the two replies
by position ("left" labelled Reply A, "right" labelled Reply B), blind.

No system name, no response id, no other rater's judgment: the side each reply takes is recomputed from
the annotator's seed when the answer comes (annotation/pairwise_order.py), so the page only ever sends
back "left", "right" or "tie".
"""

from __future__ import annotations

from typing import Any

from annotation.models import Assignment, AssignmentStatus, PairwiseJudgment, WorkItem
from annotation.pairwise_order import LEFT, RIGHT, lower_id_on_left, shown_position

REPLY_LABELS = {LEFT: "Reply A", RIGHT: "Reply B"}


def pair_payload(*, assignment: Assignment, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """The pair part of an item payload (``turns`` already reduced to speakers and texts)."""
    item: WorkItem = assignment.item
    response, response_b = item.response, item.response_b
    assert response is not None  # a pair item always holds two replies
    assert response_b is not None
    left_is_a = lower_id_on_left(order_seed=assignment.annotator.order_seed, item_id=item.pk)
    left, right = (response, response_b) if left_is_a else (response_b, response)
    return {
        "turns": turns,
        "prompt": item.study.pairwise_prompt,
        "replies": [
            {"position": LEFT, "label": REPLY_LABELS[LEFT], "text": left.text},
            {"position": RIGHT, "label": REPLY_LABELS[RIGHT], "text": right.text},
        ],
        "answers": _own_choice(assignment, left_is_a),
    }


def _own_choice(assignment: Assignment, left_is_a: bool) -> dict[str, str] | None:
    """The annotator's earlier answer to this pair, as the side they picked (when they went back)."""
    if assignment.status != AssignmentStatus.DONE:
        return None
    item = assignment.item
    choice = (
        PairwiseJudgment.objects.filter(
            annotator_id=assignment.annotator_id,
            response_a_id=item.response_id,
            response_b_id=item.response_b_id,
        )
        .values_list("choice", flat=True)
        .first()
    )
    if choice is None:
        return None
    return {"choice": shown_position(choice, left_is_a=left_is_a)}
