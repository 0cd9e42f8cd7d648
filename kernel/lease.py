"""Leases: how a worker holds one piece of background work, and how the periodic recovery takes it back.

Every kind of background work (a scoring chunk, a run's planning, an import, a training, a report snapshot,
a bundle, a word vectors conversion, an LLM judge's preview) is a row with a status, an ``attempts`` count and a ``heartbeat_at``.
A worker claims the row with one conditional UPDATE that bumps the attempt: it reads the row's attempts
``a``, then updates it only where ``attempts`` is still ``a`` and the row is claimable (waiting, or held by
a worker whose heartbeat is older than the stale period). One row updated means this worker holds attempt
``a + 1``; none means another one got there first, and the worker does nothing.

Every later write of the attempt goes through its :class:`Lease`, whose only queryset is the row filtered
on the held status and that attempt number (the fence). A :class:`Lease` has no unconditional write, so the
fence holds by construction: an attempt that lost its claim (its worker stalled past the stale period and
another attempt took the work over, recovery gave it back, the work was cancelled or finished) writes
nothing, neither progress nor a result nor a failure, and a result stored by the attempt that took over is
never overwritten by the one that lost. :meth:`Lease.beat` raises :class:`LeaseLost` when its write finds
no row, so the holder stops; :meth:`Lease.write` and :meth:`Lease.finish` say whether they wrote.

The periodic recovery acts for a holder that went silent through the same lease (:meth:`Lease.of` the
row), with ``only_if_silent`` so that a holder whose heartbeat came back meanwhile keeps its work. What one
pass did to one kind of work is one :class:`RecoveryReport`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import F, Model, Q, QuerySet
from django.utils import timezone


class LeaseLost(Exception):
    """This attempt no longer holds its work (taken over, given back, cancelled or finished): stop."""


def _no_cap() -> int | None:
    return None


@dataclass(frozen=True)
class LeaseTerms:
    """How one kind of work is leased: its model, the status of a held row and of a waiting one, how long
    a silent holder is trusted (read at each use: settings change in tests and deployments), and how many
    attempts the work gets (None: no cap).

    ``takeover``: whether the next delivery may claim a held row whose holder went silent; when False only
    waiting rows are claimed, and the periodic recovery gives stale ones back (or fails them)."""

    model: type[Model]
    running: str
    waiting: str
    stale_seconds: Callable[[], float]
    max_attempts: Callable[[], int | None] = _no_cap
    takeover: bool = True

    def rows(self) -> QuerySet[Any]:
        return self.model._default_manager.all()

    def stale_before(self) -> datetime:
        return timezone.now() - timedelta(seconds=float(self.stale_seconds()))

    def silent(self) -> Q:
        """Held rows whose holder's heartbeat is older than the stale period (or was never written)."""
        return Q(status=self.running) & (
            Q(heartbeat_at__lt=self.stale_before()) | Q(heartbeat_at__isnull=True)
        )

    def claimable(self) -> Q:
        """Rows a worker may claim: waiting ones, and (with takeover) held ones whose holder went silent."""
        waiting = Q(status=self.waiting)
        return waiting | self.silent() if self.takeover else waiting

    def stale(self) -> QuerySet[Any]:
        """The held rows whose holder went silent: the periodic recovery's to give back or fail."""
        return self.rows().filter(self.silent())

    def exhausted(self, attempts: int) -> bool:
        """Whether work that used ``attempts`` attempts may get no more."""
        cap = self.max_attempts()
        return cap is not None and attempts >= cap


@dataclass(frozen=True)
class Lease:
    """Attempt ``attempt`` of the work in row ``pk``: every write of that attempt goes through here."""

    terms: LeaseTerms
    pk: int
    attempt: int

    @classmethod
    def of(cls, terms: LeaseTerms, row: Any) -> Lease:
        """The lease of the attempt that holds ``row`` now (what recovery acts through for a silent one)."""
        return cls(terms, int(row.pk), int(row.attempts))

    @property
    def over_cap(self) -> bool:
        """This attempt is one more than the work may get (its predecessors all stopped without ending)."""
        cap = self.terms.max_attempts()
        return cap is not None and self.attempt > cap

    def held(self, *, only_if_silent: bool = False, where: Q | None = None) -> QuerySet[Any]:
        """The row, as long as this attempt holds it (and, with ``only_if_silent``, its heartbeat is stale;
        with ``where``, a condition on the row's own columns, see :func:`fenced`)."""
        rows = self.terms.rows().filter(pk=self.pk, status=self.terms.running, attempts=self.attempt)
        if only_if_silent:
            rows = rows.filter(self.terms.silent())
        return fenced(rows.filter(where) if where is not None else rows)

    def write(self, *, where: Q | None = None, **fields: Any) -> bool:
        """Write ``fields`` while this attempt holds the work (and ``where`` holds); whether it still did."""
        return bool(self.held(where=where).update(**fields))

    def beat(self, **fields: Any) -> None:
        """The heartbeat, with ``fields`` (progress); raises :class:`LeaseLost` when the attempt lost it."""
        if not self.write(heartbeat_at=timezone.now(), **fields):
            raise LeaseLost(f"{self.terms.model.__name__} {self.pk}: attempt {self.attempt} lost its claim")

    def finish(self, status: str, *, only_if_silent: bool = False, **fields: Any) -> bool:
        """End the work with ``status`` and ``fields``; False when this attempt no longer held it."""
        return bool(self.held(only_if_silent=only_if_silent).update(status=status, **fields))

    def release(self, *, only_if_silent: bool = False, **fields: Any) -> bool:
        """Give the work back, waiting for another attempt (a fresh heartbeat unless ``fields`` set one:
        the recovery that follows waits a stale period before giving it back again)."""
        fields.setdefault("heartbeat_at", timezone.now())
        return self.finish(self.terms.waiting, only_if_silent=only_if_silent, **fields)


class JoinedFenceError(ValueError):
    """A fenced write's filter reaches into another table (see :func:`fenced`)."""


def fenced(rows: QuerySet[Any]) -> QuerySet[Any]:
    """``rows``, checked to filter on their own table's columns only; raises :class:`JoinedFenceError`.

    A claim or a fenced write is one UPDATE whose WHERE is the fence (``attempts = a`` and the row is
    claimable or held). When a concurrent claim of the same row commits first, PostgreSQL (READ COMMITTED)
    waits for it, then checks the UPDATE's WHERE again against the row as that claim left it, so the loser
    updates nothing. Django writes an UPDATE whose filter joins another table (``run__status=...``) as
    ``WHERE id IN (SELECT ... JOIN ...)``, and the recheck then re-reads only ``id IN (...)``, whose subquery
    saw the row before the other claim: both claims bumped ``attempts``, neither holder held the result, and
    the chunk's attempts ran out while no worker computed it. A condition on another table goes in as
    ``<fk>_id__in=<subquery on that table>``, which keeps the row's own conditions in the UPDATE itself.
    """
    if rows.query.count_active_tables() > 1:
        raise JoinedFenceError(
            f"a fenced write on {rows.model.__name__} filters through another table; filter on its own "
            "columns (a foreign key with __in=<subquery>) so PostgreSQL rechecks the fence"
        )
    return rows


def lease_claim(
    terms: LeaseTerms, pk: int, *, where: Q | None = None, attempts: int | None = None, **fields: Any
) -> Lease | None:
    """Claim row ``pk`` for a new attempt (see the module docstring), writing ``fields`` with the claim;
    ``where`` narrows what may be claimed (the run is still running, no cancel was asked); ``attempts`` is
    the row's count as the caller just read it (one query fewer; a stale value only fails the claim). None
    when the row is not claimable or another worker claimed it first."""
    rows = terms.rows().filter(pk=pk).filter(terms.claimable())
    if where is not None:
        rows = fenced(rows.filter(where))
    if attempts is None:
        attempts = rows.values_list("attempts", flat=True).first()
        if attempts is None:
            return None
    claimed = rows.filter(attempts=attempts).update(
        status=terms.running, attempts=F("attempts") + 1, heartbeat_at=timezone.now(), **fields
    )
    return Lease(terms, pk, int(attempts) + 1) if claimed else None


def lease_ask_again(terms: LeaseTerms, pk: int, *, failed: str, **fields: Any) -> bool:
    """Put work that is asked for again back to waiting, with ``fields`` and a fresh heartbeat, when it
    failed (status ``failed``), waits with a stale heartbeat (its message was lost) or is held by a silent
    holder; the attempts go on counting, so an attempt that lost the work stays fenced out. Whether it did
    (the caller then sends the work's message)."""
    again = Q(status=failed) | Q(status=terms.waiting, heartbeat_at__lt=terms.stale_before()) | terms.silent()
    rows = terms.rows().filter(again, pk=pk)
    return bool(rows.update(status=terms.waiting, heartbeat_at=timezone.now(), **fields))


def lease_give_up(terms: LeaseTerms, pk: int, *, attempts: int, status: str, **fields: Any) -> bool:
    """End work that used its last attempt (``attempts``, as read) with ``status`` and ``fields``: only
    while it is still at that attempt and either waiting or held by a silent holder, so a live holder, or
    an attempt that claimed it meanwhile, keeps it. Whether it ended it."""
    waiting_or_silent = Q(status=terms.waiting) | terms.silent()
    rows = terms.rows().filter(waiting_or_silent, pk=pk, attempts=attempts)
    return bool(rows.update(status=status, **fields))


@dataclass
class RecoveryReport:
    """What one pass of the periodic recovery did to one kind of work: the ids of the rows it touched."""

    kind: str  # "scoring run", "scoring chunk", "import", "training", "word vectors", ...
    resent: list[int] = field(default_factory=list)  # waiting work whose message was lost: sent again
    requeued: list[int] = field(default_factory=list)  # held work whose holder went silent: given back
    failed: list[int] = field(default_factory=list)  # ... on its last attempt: failed, saying so
    finished: list[int] = field(default_factory=list)  # closed without another attempt (done, cancelled)
    notes: list[str] = field(default_factory=list)  # what else it did, in words (leftovers removed ...)

    def __bool__(self) -> bool:
        return bool(self.resent or self.requeued or self.failed or self.finished or self.notes)

    def __str__(self) -> str:
        parts = [
            f"{what} {', '.join(str(pk) for pk in ids)}"
            for what, ids in (
                ("resent", self.resent),
                ("requeued", self.requeued),
                ("failed", self.failed),
                ("finished", self.finished),
            )
            if ids
        ]
        return f"{self.kind}: {'; '.join([*parts, *self.notes]) or 'nothing to do'}"

    def resend(self, pk: int, send: Callable[[int], bool]) -> None:
        """Send waiting work's message again; recorded when the broker took it."""
        if send(pk):
            self.resent.append(pk)


def recovery_summary(reports: Iterable[RecoveryReport]) -> str:
    """One line for the log: what the pass did, per kind of work that it touched."""
    return " | ".join(str(report) for report in reports if report)


def recovery_of(reports: Iterable[RecoveryReport], kind: str) -> RecoveryReport:
    """The report of ``kind`` among a pass's reports (an empty one when the pass has none)."""
    return next((report for report in reports if report.kind == kind), RecoveryReport(kind))
