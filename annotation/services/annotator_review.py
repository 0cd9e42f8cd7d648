"""The researcher's decisions about one annotator: count their ratings in reports or not, unblock them.

Neither deletes anything: report inclusion only filters what reports read, and unblocking gives work
again. Failed checks stay recorded, so an unblocked annotator who fails one more is blocked again unless
the study tolerates more failures (``check_failures_allowed``).
"""

from __future__ import annotations

from annotation.models import Annotator
from kernel.data_version import study_data_changed

INCLUSION_VALUES = ("auto", "include", "exclude")


class ReviewInvalid(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def annotator_inclusion_set(*, annotator: Annotator, inclusion: str) -> Annotator:
    """auto: by the study's agreement threshold; include / exclude: the researcher's override."""
    if inclusion not in INCLUSION_VALUES:
        raise ReviewInvalid("report_inclusion", f"choose one of {', '.join(INCLUSION_VALUES)}")
    changed = (
        Annotator.objects.filter(pk=annotator.pk)
        .exclude(report_inclusion=inclusion)
        .update(report_inclusion=inclusion)
    )
    annotator.report_inclusion = inclusion
    if changed:  # choosing the current value again changes no report
        study_data_changed(study_id=annotator.study_id)
    return annotator


def annotator_unblock(*, annotator: Annotator) -> Annotator:
    annotator.blocked = False
    annotator.save(update_fields=["blocked"])
    return annotator
