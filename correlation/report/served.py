"""What the API and the downloads answer for a report: the current report when it is ready, else
202 Accepted while a worker computes it, never a report computed inside the request.

* 200: the report of the study's current data (``X-Report-Data-Version`` names it);
* 200 with ``X-Report-Stale: true``: the newest older report, when the client asked for it with
  ``?stale=ok`` and the current one is not ready (``X-Study-Data-Version`` says how far behind it is);
* 202 Accepted: the worker's build has been started (or joined); the JSON body says how far it is, and
  ``Location`` (the same request) and ``Retry-After`` say where and when to ask again;
* 503 with ``Retry-After``: the build failed (the body says why); it has been queued again.

A report that needs METEOR 1.5 recomputed per reference took longer than gunicorn's 30 s worker timeout:
computed in the request, the client got an HTML 500; here the request only reads and queues.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from annotation.models import Study
from correlation.models import ReportSnapshot, SnapshotStatus
from correlation.report.cache import report_retry, report_served
from stats.report.types import ReportOptions

STALE_VALUES = ("ok", "1", "true", "yes")  # ?stale=ok: the newest older report rather than a 202


@dataclass(frozen=True)
class ServedReport:
    """``snapshot`` to serve (status 200), or ``body`` to answer with ``status`` (202, 503); ``headers`` either way."""

    status: int
    snapshot: ReportSnapshot | None = None
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


def stale_asked(params: Any) -> bool:
    return str(params.get("stale") or "").strip().lower() in STALE_VALUES


def served_report(*, study: Study, options: ReportOptions, stale_ok: bool, location: str) -> ServedReport:
    """The answer for the report of ``study`` with ``options``; ``location``: the URL to ask again."""
    view = report_served(study=study, options=options)
    current, shown = view.current, view.shown
    if view.fresh and shown is not None:
        return ServedReport(200, shown, headers={"X-Report-Data-Version": str(shown.data_version)})
    if stale_ok and shown is not None:
        return ServedReport(
            200,
            shown,
            headers={
                "X-Report-Stale": "true",
                "X-Report-Data-Version": str(shown.data_version),
                "X-Study-Data-Version": str(view.data_version),
            },
        )
    retry = str(settings.DIALEVAL_REPORT_POLL_SECONDS)
    if current is not None and current.status == SnapshotStatus.FAILED:
        report_retry(snapshot=current)
        return ServedReport(
            503,
            body={
                "detail": f"The report could not be computed ({current.error or 'no reason given'}). It has been "
                "queued again; ask again in a moment.",
                "status": "failed",
                "data_version": view.data_version,
            },
            headers={"Retry-After": retry},
        )
    done = current.progress_done if current is not None else 0
    total = current.progress_total if current is not None else 0
    return ServedReport(
        202,
        body={
            "detail": "The report of the study's current data is being computed by a worker; ask again at the "
            "Location given (add stale=ok to get the newest older report meanwhile, when there is one).",
            "status": current.status if current is not None else SnapshotStatus.PENDING,
            "progress": round(100 * done / total) if total else 0,
            "stage": current.stage if current is not None else "",
            "data_version": view.data_version,
            "stale_available": shown is not None,
            "location": location,
        },
        headers={"Location": location, "Retry-After": retry},
    )
