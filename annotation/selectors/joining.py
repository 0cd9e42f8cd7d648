"""Reads for joining a study; the writes are in annotation/services/joining.py."""

from __future__ import annotations

from annotation.models import Annotator, Study


def crowd_worker_annotator(*, study: Study, worker_id: str) -> Annotator | None:
    """The annotator (with their account) that the crowd link of ``study`` made for ``worker_id``, if any.

    Read without creating anything, so the invite link can tell a returning worker from someone else who
    is logged in in the same browser before it changes who is logged in."""
    return (
        Annotator.objects.select_related("user", "study")
        .filter(study=study, external_worker_id=worker_id, user__isnull=False)
        .first()
    )
