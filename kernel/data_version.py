"""The study's data version: a counter that every write able to change a report bumps.

Cached correlation reports are keyed on ``Study.data_version`` (correlation/report/cache.py), so a report
is never served from before a change and never recomputed while nothing changed. The bump runs after the
surrounding transaction commits (``transaction.on_commit``):

* a rolled-back write bumps nothing;
* the row lock the bump takes is held for one autocommit UPDATE, not for the whole submission, so
  annotators submitting at once do not queue behind each other's transactions;
* a reader that sees version V+1 also sees the data written before the bump. A report computed from data
  newer than the version it read is stored under that older version and simply recomputed at the next
  view, never served as current.
"""

from __future__ import annotations

from django.apps import apps
from django.db import transaction
from django.db.models import F, Model

# The model that holds the counter (annotation.Study.data_version), named rather than imported: the kernel is
# the layer below every app and imports none of them.
STUDY_MODEL = "annotation.Study"


def study_data_changed(*, study_id: int) -> None:
    """Bump the study's data version once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: _bump(study_id))


def _study_model() -> type[Model]:
    return apps.get_model(STUDY_MODEL)


def _bump(study_id: int) -> None:
    _study_model()._default_manager.filter(pk=study_id).update(data_version=F("data_version") + 1)


def study_data_version(*, study_id: int) -> int:
    """The current data version (0 for a study that does not exist)."""
    version = (
        _study_model()._default_manager.filter(pk=study_id).values_list("data_version", flat=True).first()
    )
    return int(version or 0)
