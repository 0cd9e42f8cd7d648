"""Waiting work whose task message went missing: send it again, once its last send is old enough.

Training jobs and word vectors conversions are both rows created PENDING whose task message may never
have reached the broker (it was down) or may have been lost with it; the row records when it was last
sent (``progress["sent_at"]``), and the periodic recovery sends the message again for a row left waiting
longer than a stale period since then. One loop for both, so the two kinds of work recover alike.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db.models import QuerySet

from kernel.lease import RecoveryReport


def parsed_time(value: Any) -> datetime | None:
    """An ISO time stored in a progress dict (``sent_at``), or None when absent or unreadable."""
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def unsent_pending_resend(
    report: RecoveryReport,
    pending: QuerySet[Any],
    *,
    now: datetime,
    stale_seconds: float,
    pending_grace_seconds: float,
    send: Callable[[int], bool],
) -> None:
    """Send again the message of every row of ``pending`` (rows waiting for a worker) created more than
    ``pending_grace_seconds`` ago and not sent within ``stale_seconds``; rows the same pass requeued are
    left out. Each send is recorded in ``report``."""
    resend_before = now - timedelta(seconds=stale_seconds)
    waiting = pending.filter(created_at__lt=now - timedelta(seconds=pending_grace_seconds)).exclude(
        pk__in=report.requeued
    )
    for row in waiting.order_by("created_at"):
        sent_at = parsed_time(row.progress.get("sent_at"))
        if sent_at is not None and sent_at >= resend_before:
            continue
        report.resend(row.pk, send)
