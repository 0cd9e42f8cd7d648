"""The assignment engine: who gets which work item next.

Rules (Potato's least_annotated strategy is the model):

- an annotator asking for work gets the item of the requested kind with the fewest assignments that they
  have never been given; ties are broken by the annotator's own seeded shuffle, so every annotator sees a
  different, reproducible order (the seed is stored on :class:`Annotator`; the hash is
  :func:`annotation.item_order.shuffle_key`). In a large study the shuffle
  ranges over the ``POOL_WINDOW`` (256) free items they were never given with the fewest assignments,
  ties between those in a random rank each item draws when it is made (``WorkItem.pool_rank``): the items
  with the fewest assignments are always among them, and the database reads them from an index instead
  of sorting every free item on each hand-out; a study with at most 256 such items is shuffled whole;
- nobody gets a reply to rate whose gold answer they were shown in the qualification round;
- nobody gets an item twice (a unique constraint on ``(item, annotator)``); an item the annotator skipped
  comes back to them at the end of their queue, when nothing new is left and the item still has room;
- an annotator gets at most ``study.max_items_per_annotator`` items of a kind;
- an item handed out and not answered within ``study.hold_seconds`` goes back to the pool;
- about one item in ``study.check_interval`` is an attention check, shown exactly like a rating item.

Concurrency: a slot is only ever taken by ``UPDATE work_item SET taken = taken + 1 WHERE id = %s AND
taken < wanted`` and the update's row count says whether it worked, so two annotators never both get
the last slot, on any database. The candidates are read without locks: every annotator has their own
shuffle, so concurrent requests rarely want the same row, and when they do the conditional UPDATE waits
for the other transaction and re-checks ``taken < wanted`` (on PostgreSQL; SQLite serialises writers
anyway, ``transaction_mode = IMMEDIATE`` in the settings). Reading them ``FOR UPDATE SKIP LOCKED`` cost
more than it saved: the row lock sits between the sort and the LIMIT, so PostgreSQL sorted every free
item instead of keeping the best few (the annotation load benchmark: docs/benchmarks.md, Annotation server).
The annotator's own row is locked first, so a double click cannot hand one person two items at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.item_order import shuffle_key
from annotation.models import (
    Annotator,
    AnnotatorOrigin,
    Assignment,
    AssignmentStatus,
    AttentionCheck,
    DialogContext,
    Response,
    Study,
    TrainingAnswer,
    WorkItem,
    WorkKind,
)
from annotation.selectors.work import OwnCounts, own_assignment_counts
from annotation.services.work_items import work_items_sync, writer_quota

CANDIDATES_PER_TRY = 8
# The free items a hand-out looks at: this many with the fewest answers, ties in the items' random
# ``pool_rank``, read in the order of the index (study, kind, taken, pool_rank). Sorting every free item of
# a large study by the annotator's shuffle was the costliest statement of a hand-out (the annotation load
# benchmark).
POOL_WINDOW = 256


class NoWork(Exception):
    """Why an annotator gets no item: everything is done, the cap is reached, or they are blocked."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def kinds_served(kind: str) -> tuple[str, ...]:
    """Attention checks are drawn from the rating queue."""
    return (WorkKind.RATE, WorkKind.CHECK) if kind == WorkKind.RATE else (kind,)


def _window(annotator: Annotator, kind: str, *, trained: bool) -> list[tuple[int, int]]:
    """``(id, taken)`` of the POOL_WINDOW free items of ``kind`` with the fewest answers that the annotator
    was never given (``trained``: they answered training items, whose replies are left out of their rating
    pool), ties in the items' random ``pool_rank``: the database reads them in the order of the index
    (study, kind, taken, pool_rank) and stops there, however many items the study has."""
    # NOT IN over the annotator's own (few) items: one hashed set, where NOT EXISTS probed the assignment
    # index once per free item of the study.
    pool = WorkItem.objects.filter(study_id=annotator.study_id, kind=kind, taken__lt=F("wanted")).exclude(
        pk__in=Assignment.objects.filter(annotator=annotator).values("item_id")
    )
    if trained:
        # A reply the annotator met in the qualification round, where they were shown its gold answer, is
        # not theirs to rate for real (others still rate it).
        pool = pool.exclude(
            response_id__in=TrainingAnswer.objects.filter(annotator=annotator).values(
                "training_item__response_id"
            )
        )
    return list(pool.order_by("taken", "pool_rank").values_list("pk", "taken")[:POOL_WINDOW])


def _answered_training(annotator: Annotator) -> bool:
    """Whether the annotator answered training items. A volunteer still "pending" gets rating work only in
    a study without training items (the admission gate), whose answers went with them: no query."""
    if annotator.origin == AnnotatorOrigin.VOLUNTEER and annotator.qualification == "pending":
        return False
    return TrainingAnswer.objects.filter(annotator=annotator).exists()


def expire_stale(*, study: Study) -> int:
    """Return to the pool the items handed out more than ``hold_seconds`` ago and not answered."""
    cutoff = timezone.now() - timedelta(seconds=study.hold_seconds)
    stale = list(
        Assignment.objects.filter(
            item__study=study, status=AssignmentStatus.ACTIVE, handed_at__lt=cutoff
        ).values_list("pk", "item_id")
    )
    expired = 0
    for assignment_id, item_id in stale:
        with transaction.atomic():
            changed = Assignment.objects.filter(pk=assignment_id, status=AssignmentStatus.ACTIVE).update(
                status=AssignmentStatus.EXPIRED, finished_at=timezone.now()
            )
            if changed:
                WorkItem.objects.filter(pk=item_id, taken__gt=0).update(taken=F("taken") - 1)
                expired += changed
    return expired


def active_assignment(*, annotator: Annotator, kind: str) -> Assignment | None:
    """The item of ``kind`` the annotator holds now (with what its screen shows), or None."""
    current = (
        Assignment.objects.filter(
            annotator=annotator, status=AssignmentStatus.ACTIVE, item__kind__in=kinds_served(kind)
        )
        .select_related("item")
        .order_by("-handed_at")
        .first()
    )
    return None if current is None else with_payload(current, study=annotator.study)


def _given(counts: OwnCounts) -> tuple[dict[str, int], set[str]]:
    """Items per kind the annotator holds or answered (skipped and expired ones do not count), and the
    kinds of which they hold one now."""
    given: dict[str, int] = {}
    held: set[str] = set()
    for (kind, status), (n, _free) in counts.items():
        if status in (AssignmentStatus.ACTIVE, AssignmentStatus.DONE):
            given[kind] = given.get(kind, 0) + n
        if status == AssignmentStatus.ACTIVE and n:
            held.add(kind)
    return given, held


def _take_slot(item_id: int) -> WorkItem | None:
    """Take one slot of the item when it has room: ``UPDATE ... SET taken = taken + 1 WHERE taken < wanted``
    (the module docstring). None when it had none; else the item as it is after this one, from the
    statement's RETURNING clause (PostgreSQL, SQLite >= 3.35), so that neither the item nor the
    annotator's progress has to be read again."""
    quote = connection.ops.quote_name
    fields = WorkItem._meta.concrete_fields
    returning = ", ".join(quote(field.column) for field in fields)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(WorkItem._meta.db_table)} SET taken = taken + 1 "
            f"WHERE id = %s AND taken < wanted RETURNING {returning}",
            [item_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return WorkItem.from_db(connection.alias, [field.attname for field in fields], row)


@dataclass(frozen=True)
class _Taken:
    assignment: Assignment
    still_free: bool  # the item has room for more answers after this hand-out
    was: str | None = None  # the status of an assignment taken back (a skip), None for a new one


def _counted(counts: OwnCounts, taken: _Taken) -> OwnCounts:
    """The annotator's counts once ``taken`` is handed out (it was not counted as active before)."""
    kind = str(taken.assignment.item.kind)
    after = dict(counts)
    if taken.was is not None:  # it had room a moment ago: its slot was just taken
        n, free = after.get((kind, taken.was), (0, 0))
        after[(kind, taken.was)] = (max(0, n - 1), max(0, free - 1))
    n, free = after.get((kind, AssignmentStatus.ACTIVE), (0, 0))
    after[(kind, AssignmentStatus.ACTIVE)] = (n + 1, free + int(taken.still_free))
    return after


def with_payload(assignment: Assignment, *, study: Study) -> Assignment:
    """``assignment`` with what its screen shows (annotation.selectors.work.item_payload) loaded: the
    reply and its context, the check, the context, or the two replies of a pair, by primary key.

    One query per relation the item's kind has, not one query joining every relation any kind might
    have: on PostgreSQL, planning that ten-table join took ~10 ms, more than the rest of a hand-out.
    """
    item = assignment.item  # a query only when the caller did not load it
    item.study = study
    if item.kind == WorkKind.CHECK and item.attention_check_id is not None:
        item.attention_check = AttentionCheck.objects.select_related("context").get(
            pk=item.attention_check_id
        )
    replies = [pk for pk in (item.response_id, item.response_b_id) if pk is not None]
    if replies:
        loaded = Response.objects.select_related("context").in_bulk(replies)
        item.response = loaded.get(item.response_id) if item.response_id is not None else None
        if item.response_b_id is not None:
            item.response_b = loaded.get(item.response_b_id)
    if item.context_id is not None:
        if item.response is not None and item.response.context_id == item.context_id:
            item.context = item.response.context
        else:
            item.context = DialogContext.objects.get(pk=item.context_id)
    return assignment


def _candidates(annotator: Annotator, kind: str) -> list[int]:
    """The ids of the annotator's best free items of ``kind``: fewest answers first, then their shuffle,
    among the window (:func:`_window`; sorted here, a few hundred pairs)."""
    trained = kind == WorkKind.RATE and _answered_training(annotator)
    window = _window(annotator, kind, trained=trained)
    seed = int(annotator.order_seed)
    window.sort(key=lambda row: (row[1], shuffle_key(order_seed=seed, item_id=row[0])))
    return [item_id for item_id, _taken in window[:CANDIDATES_PER_TRY]]


def _take(
    annotator: Annotator, kind: str, sequence: int, *, chosen: list[int] | None = None
) -> _Taken | None:
    """Try the best candidates in order; the conditional UPDATE decides who gets a contested slot (it
    waits for a concurrent transaction holding the row and re-checks ``taken < wanted``).

    ``chosen``: candidates read before the transaction began, so that the sort over the study's free items
    runs outside the write lock (on SQLite every other writer waits while a transaction runs); when none
    of them is free any more, the pool is read again here. One the annotator was given meanwhile (a
    double click) fails the (item, annotator) unique constraint and the caller starts over."""
    for ids in ([chosen] if chosen else []) + [None]:
        for item_id in ids if ids is not None else _candidates(annotator, kind):
            item = _take_slot(item_id)
            if item is not None:
                quota = writer_quota(annotator.study, item) if kind == WorkKind.WRITE else 1
                assignment = Assignment.objects.create(
                    item=item,
                    annotator=annotator,
                    sequence=sequence,
                    quota=quota,
                    served_at=timezone.now(),
                )
                return _Taken(assignment, still_free=item.taken < item.wanted)
    return None


def _retake_skipped(annotator: Annotator, kind: str, sequence: int) -> _Taken | None:
    """A skipped item comes back at the end of the queue: when nothing new is left, the annotator's
    oldest skip whose item still has room is theirs again (the same conditional UPDATE decides)."""
    skipped = Assignment.objects.filter(
        annotator=annotator, status=AssignmentStatus.SKIPPED, item__kind=kind
    ).order_by("finished_at", "id")
    for assignment_id, item_id in skipped.values_list("pk", "item_id")[:CANDIDATES_PER_TRY]:
        item = _take_slot(item_id)
        if item is not None:
            quota = writer_quota(annotator.study, item) if kind == WorkKind.WRITE else 1
            Assignment.objects.filter(pk=assignment_id).update(
                status=AssignmentStatus.ACTIVE,
                finished_at=None,
                served_at=timezone.now(),
                sequence=sequence,
                quota=quota,
            )
            retaken = Assignment.objects.get(pk=assignment_id)
            retaken.item = item
            return _Taken(retaken, still_free=item.taken < item.wanted, was=AssignmentStatus.SKIPPED)
    return None


@dataclass(frozen=True)
class Handout:
    assignment: Assignment
    resumed: bool  # the annotator already held this item (a reload, another tab)
    # The annotator's assignment counts with this one (annotation.selectors.work.progress_from_counts),
    # when the hand-out read them anyway; None: read them for the progress.
    counts: OwnCounts | None = None


def next_assignment(*, annotator: Annotator, kind: str = WorkKind.RATE) -> Handout:
    """The annotator's current item of ``kind``, or a new one; raises :class:`NoWork` when there is none."""
    if kind == WorkKind.CHECK or kind not in WorkKind.values:
        raise ValueError(f"unknown work kind {kind!r}")
    for attempt in range(3):
        try:
            return _next_assignment(annotator=annotator, kind=kind, sweep=attempt > 0)
        except IntegrityError:  # the same annotator in two requests at once: the other one won
            continue
    current = active_assignment(annotator=annotator, kind=kind)
    if current is not None:
        return Handout(current, resumed=True)
    raise NoWork("busy", "The server is busy; try again in a moment.")


def task_enabled(study: Study, kind: str) -> bool:
    if kind == WorkKind.RATE:
        return study.rating_enabled
    if kind == WorkKind.WRITE:
        return study.references_wanted > 0
    if kind == WorkKind.PAIR:
        return study.pairwise_enabled
    return study.diversity_enabled


def _handout(taken: _Taken, *, study: Study, counts: OwnCounts) -> Handout:
    return Handout(with_payload(taken.assignment, study=study), resumed=False, counts=_counted(counts, taken))


def _next_assignment(*, annotator: Annotator, kind: str, sweep: bool) -> Handout:
    study = annotator.study
    if not task_enabled(study, kind):  # items of a task turned off stay in the database, unused
        raise NoWork("closed", f"This study has no “{WorkKind(kind).label}” task at the moment.")
    chosen = _candidates(annotator, kind)  # before the write lock (see _take)
    with transaction.atomic():
        blocked = (
            Annotator.objects.select_for_update()
            .filter(pk=annotator.pk)
            .values_list("blocked", flat=True)
            .get()
        )
        if blocked:
            raise NoWork(
                "blocked",
                "You failed too many attention checks, so this study gives you no more items. "
                "Contact the researcher if you think this is a mistake.",
            )
        counts = own_assignment_counts(annotator=annotator)
        given_per_kind, held = _given(counts)
        if held.intersection(str(served) for served in kinds_served(kind)):  # a reload, another tab
            current = active_assignment(annotator=annotator, kind=kind)
            if current is not None:
                return Handout(current, resumed=True, counts=counts)
        given = given_per_kind.get(kind, 0)
        cap = study.max_items_per_annotator
        if cap is not None and given >= cap:
            raise NoWork("cap", f"You have done your share of this study ({cap} items). Thank you!")
        sequence = given + 1
        if kind == WorkKind.RATE:
            # Position in the annotator's queue, checks included: every check_interval-th is a check.
            sequence += given_per_kind.get(WorkKind.CHECK, 0)
            if study.check_interval and sequence % study.check_interval == 0:
                check = _take(annotator, WorkKind.CHECK, sequence)
                if check is not None:
                    return _handout(check, study=study, counts=counts)
        taken = _take(annotator, kind, sequence, chosen=chosen)
        if taken is None and not WorkItem.objects.filter(study=study, kind=kind).exists():
            work_items_sync(study=study)  # a study whose items were never made (e.g. created before them)
            taken = _take(annotator, kind, sequence)
        if taken is None:
            taken = _retake_skipped(annotator, kind, sequence)
        if taken is not None:
            return _handout(taken, study=study, counts=counts)
    # Nothing free: return stale holds to the pool and try once more before saying so.
    if not sweep and expire_stale(study=study):
        return _next_assignment(annotator=annotator, kind=kind, sweep=True)
    # Items others hold but have not answered yet may still come free (a skip, a timeout).
    unanswered = WorkItem.objects.filter(study=study, kind=kind, done__lt=F("wanted"))
    if unanswered.exclude(assignments__annotator=annotator).exists():
        raise NoWork("busy", "Other annotators are working on the remaining items; try again in a moment.")
    raise NoWork("done", "There is nothing more for you to do in this study. Thank you!")


def assignment_visit(*, assignment: Assignment) -> None:
    """Note that ``assignment`` is being shown: the server's own clock for the answer starts here.

    An item handed out starts its clock when it is handed out (``served_at`` is set by :func:`_take`); a
    reload or another tab does not restart it, so reloading cannot make an answer look slower or faster
    than it was. An answered item opened again to change the answer (back) starts a new visit, whose time
    is added to the first one's."""
    if assignment.status == AssignmentStatus.DONE or assignment.served_at is None:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk).update(served_at=now)
        assignment.served_at = now


def server_seconds(assignment: Assignment, *, since: datetime | None = None) -> float:
    """Seconds from the start of this visit (or from ``since``, when later: e.g. the writer's previous
    reference) to now, measured by the server. The client's figure is kept beside it, never used for
    flags: an API call can claim any time it likes."""
    start = assignment.served_at or assignment.handed_at
    if since is not None and since > start:
        start = since
    return round(max(0.0, (timezone.now() - start).total_seconds()), 3)


def assignment_for(*, annotator: Annotator, assignment_id: int) -> Assignment:
    """The annotator's own assignment (Assignment.DoesNotExist for anyone else's)."""
    assignment = Assignment.objects.select_related("item").get(pk=assignment_id, annotator=annotator)
    assignment.item.study = annotator.study  # the annotator's own study, already loaded with them
    return assignment


def assignment_skip(*, annotator: Annotator, assignment_id: int) -> None:
    """The annotator passes on an item: it goes back to the pool for others, and comes back to them at
    the end of their queue if it still needs answers then."""
    with transaction.atomic():
        assignment = assignment_for(annotator=annotator, assignment_id=assignment_id)
        changed = Assignment.objects.filter(pk=assignment.pk, status=AssignmentStatus.ACTIVE).update(
            status=AssignmentStatus.SKIPPED, finished_at=timezone.now()
        )
        if changed:
            WorkItem.objects.filter(pk=assignment.item_id, taken__gt=0).update(taken=F("taken") - 1)


class SlotLost(Exception):
    """An answer came for an item that timed out and was given to others in the meantime."""


def assignment_hold(*, assignment: Assignment) -> None:
    """Make sure the annotator still holds ``assignment`` before storing part of an answer (inside the
    caller's transaction): an expired or skipped one is taken back if its item still has room, otherwise
    :class:`SlotLost`. (Collection items are answered one reference at a time; without this, a writer
    could keep adding references to a context after skipping it, on top of the new writer's.)"""
    if assignment.status in (AssignmentStatus.ACTIVE, AssignmentStatus.DONE):
        return
    retaken = WorkItem.objects.filter(pk=assignment.item_id, taken__lt=F("wanted")).update(
        taken=F("taken") + 1
    )
    if not retaken or not Assignment.objects.filter(pk=assignment.pk, status=assignment.status).update(
        status=AssignmentStatus.ACTIVE, finished_at=None
    ):
        raise SlotLost("This item was given to another annotator in the meantime; here is a new one.")
    assignment.status = AssignmentStatus.ACTIVE
    assignment.finished_at = None


def assignment_complete(
    *, assignment: Assignment, seconds: float | None, client_seconds: float | None = None
) -> None:
    """Mark ``assignment`` done (inside the caller's transaction). An expired or skipped assignment is
    revived if its item still has room; otherwise :class:`SlotLost`. A done one (an edit) stays done.
    ``seconds`` is the server's measure of the visit, ``client_seconds`` the browser's (kept, not trusted)."""
    now = timezone.now()
    if assignment.status == AssignmentStatus.DONE:  # an edit: the item's time is the sum of the visits
        if seconds is not None:
            total = (assignment.seconds_spent or 0.0) + seconds
            client_total = None
            if client_seconds is not None:
                client_total = (assignment.client_seconds or 0.0) + client_seconds
            Assignment.objects.filter(pk=assignment.pk).update(
                seconds_spent=total, client_seconds=client_total
            )
            assignment.seconds_spent = total
            assignment.client_seconds = client_total
        return
    if assignment.status != AssignmentStatus.ACTIVE:
        revived = WorkItem.objects.filter(pk=assignment.item_id, taken__lt=F("wanted")).update(
            taken=F("taken") + 1
        )
        if not revived:
            raise SlotLost(
                "This item waited too long and was given to other annotators; your answer was not needed. "
                "Here is a new one."
            )
    changed = Assignment.objects.filter(pk=assignment.pk, status=assignment.status).update(
        status=AssignmentStatus.DONE, finished_at=now, seconds_spent=seconds, client_seconds=client_seconds
    )
    if not changed:
        raise SlotLost("This item changed while you answered it; please reload.")
    WorkItem.objects.filter(pk=assignment.item_id).update(done=F("done") + 1)
    assignment.status = AssignmentStatus.DONE
    assignment.finished_at = now
    assignment.seconds_spent = seconds
    assignment.client_seconds = client_seconds


def previous_assignment(*, annotator: Annotator, kind: str, before: int | None = None) -> Assignment | None:
    """The annotator's last answered item of ``kind`` (before assignment ``before``), for "back"."""
    done = Assignment.objects.filter(
        annotator=annotator, status=AssignmentStatus.DONE, item__kind__in=kinds_served(kind)
    )
    if before is not None:
        reference = Assignment.objects.filter(pk=before, annotator=annotator).first()
        if reference is not None and reference.finished_at is not None:
            done = done.filter(Q(finished_at__lt=reference.finished_at))
    return done.select_related("item").order_by("-finished_at", "-id").first()
