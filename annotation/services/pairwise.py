"""An annotator's answer to a pairwise item: which of the two replies shown is better, or a tie.

The API takes the answer **by position**, as the annotator gave it: ``"left"`` (Reply A), ``"right"``
(Reply B) or ``"tie"``. The annotator never learns which reply is which (no response id reaches the page);
the service recomputes the side each reply was shown on from the annotator's seed
(annotation/pairwise_order.py) and stores the judgment in canonical terms: :class:`PairwiseJudgment`
``choice`` is ``"a"`` (the lower response id is better), ``"b"`` or ``"tie"``, and ``shown_first`` is the
reply that was on the left, so position bias can be measured.

Answering again (the annotator went back) replaces the choice; the times of the visits add up, as for
ratings. Time is measured by the server (``server_seconds``); the client's figure is kept beside it.
"""

from __future__ import annotations

from django.db import transaction

from annotation.models import Annotator, Assignment, PairwiseJudgment, WorkKind
from annotation.pairwise_order import POSITIONS, canonical_choice, lower_id_on_left
from annotation.services.assignment import assignment_complete, server_seconds
from annotation.services.submissions import SubmissionInvalid, SubmitResult, loaded_own
from kernel.data_version import study_data_changed

MAX_SECONDS = 86_400.0


def _own_pair(annotator: Annotator, assignment_id: int, loaded: Assignment | None) -> Assignment:
    assignment = loaded_own(annotator, assignment_id, loaded)
    if assignment.item.kind != WorkKind.PAIR:
        raise SubmissionInvalid("assignment", f"item {assignment_id} is not a pair item")
    return assignment


def _client_seconds(value: float | None) -> float | None:
    if value is None:
        return None
    if not 0 <= value < MAX_SECONDS:
        raise SubmissionInvalid("seconds", f"{value} is not a time spent on one item")
    return float(value)


def _position(choice: object) -> str:
    position = str(choice or "").strip().lower()
    if position not in POSITIONS:
        raise SubmissionInvalid(
            "choice", f"choose {', '.join(repr(p) for p in POSITIONS)} (the better reply's side, or a tie)"
        )
    return position


@transaction.atomic
def pairwise_submit(
    *,
    annotator: Annotator,
    assignment_id: int,
    choice: object,
    seconds: float | None = None,
    loaded: Assignment | None = None,
) -> SubmitResult:
    """Store ``choice`` ("left", "right" or "tie", as shown to ``annotator``) for their pair item
    ``assignment_id`` (``loaded``: that assignment as the caller already read it); ``seconds`` is the
    client's own time on the item (kept as ``client_seconds``).
    Raises :class:`SubmissionInvalid` naming the field, and changes nothing, on bad input."""
    assignment = _own_pair(annotator, assignment_id, loaded)
    position = _position(choice)
    claimed = _client_seconds(seconds)
    item = assignment.item
    response_a, response_b = item.response_id, item.response_b_id
    assert response_a is not None  # a pair item always holds two replies
    assert response_b is not None
    left_is_a = lower_id_on_left(order_seed=annotator.order_seed, item_id=item.pk)
    assignment_complete(assignment=assignment, seconds=server_seconds(assignment), client_seconds=claimed)
    PairwiseJudgment.objects.update_or_create(
        annotator=annotator,
        response_a_id=response_a,
        response_b_id=response_b,
        defaults={
            "choice": canonical_choice(position, left_is_a=left_is_a),
            "shown_first_id": response_a if left_is_a else response_b,
            "seconds_spent": assignment.seconds_spent,  # an edit adds its time to the first visit's
            "client_seconds": assignment.client_seconds,
        },
    )
    study_data_changed(study_id=annotator.study_id)  # the report's win rates read the judgments
    return SubmitResult()
