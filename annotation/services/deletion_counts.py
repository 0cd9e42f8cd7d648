"""What a deletion takes with it, counted before it is done: the confirmation pages of deleting a system and
of undoing an import name exactly what goes.

The counts come from Django's own deletion collector, the same object that then deletes: every row that
cascades from the deleted ones is counted, whichever app it belongs to (the scoring app's metric scores,
system-level scores, per-reference scores and diversity values hang on replies, contexts and systems), without this app importing
those apps (the layers contract in pyproject.toml). A confirmation carries a fingerprint of the counts; a
deletion whose counts changed in between (a volunteer rated one more reply, a scoring run stored scores) is
refused and shown again, so what goes is always what the researcher saw.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import models, router
from django.db.models.deletion import Collector

# How a confirmation names the rows of each model (singular, plural), in the order it lists them.
ROW_NAMES: dict[str, tuple[str, str]] = {
    "annotation.System": ("system", "systems"),
    "annotation.DialogContext": ("context", "contexts"),
    "annotation.Reference": ("reference", "references"),
    "annotation.Response": ("reply", "replies"),
    "annotation.Rating": ("rating", "ratings"),
    "annotation.ImportedMeanRating": ("imported mean rating", "imported mean ratings"),
    "annotation.Annotator": ("imported annotator", "imported annotators"),
    "scoring.MetricScore": ("metric score", "metric scores"),
    "scoring.SystemMetricScore": ("system-level metric score", "system-level metric scores"),
    "scoring.PerReferenceScore": (
        "per-reference score set (references curve)",
        "per-reference score sets (references curve)",
    ),
    "scoring.ContextSystemScore": (
        "diversity metric value of a system on a context (diversity table)",
        "diversity metric values of systems on contexts (diversity table)",
    ),
    "annotation.DiversityJudgment": ("diversity judgment", "diversity judgments"),
    "annotation.DiversityJudgment_appropriate": (
        "reply marked appropriate in a diversity judgment",
        "replies marked appropriate in diversity judgments",
    ),
    "annotation.PairwiseJudgment": ("pairwise judgment", "pairwise judgments"),
    "annotation.ItemNote": ("annotator comment or flag", "annotator comments and flags"),
    "annotation.Adjudication": ("adjudication", "adjudications"),
    "annotation.TrainingItem": ("training item", "training items"),
    "annotation.TrainingAnswer": ("training answer", "training answers"),
    "annotation.AttentionCheck": ("attention check", "attention checks"),
    "annotation.CheckAnswer": ("attention-check answer", "attention-check answers"),
    "annotation.WorkItem": ("work item", "work items"),
    "annotation.Assignment": ("assignment", "assignments"),
}


class DeletionRefused(Exception):
    """The deletion was not done; ``message`` says why (nothing was changed)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class DeletionPreview:
    """What a deletion would remove (``counts``: model label -> rows), what it leaves or cannot restore
    (``notes``), and why it cannot be done (``refusals``; empty when it can)."""

    subject: str
    counts: dict[str, int]
    notes: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return not self.refusals

    @property
    def lines(self) -> list[str]:
        return counts_lines(self.counts)

    @property
    def fingerprint(self) -> str:
        """Changes whenever what would go changes (compared when the deletion is confirmed)."""
        text = json.dumps([self.subject, sorted(self.counts.items())])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]

    def confirm(self, fingerprint: str | None, *, action: str) -> None:
        """Refuse (:class:`DeletionRefused`) when ``fingerprint``, the one the confirmation page showed, is
        not this preview's: what ``action`` ("deleting", "undoing") removes has changed since."""
        if fingerprint is not None and self.fingerprint != fingerprint:
            raise DeletionRefused(
                f"What {action} {self.subject} removes has changed since the confirmation was shown "
                "(new ratings or scores, say); look at it again. Nothing was deleted."
            )


def cascade_collector(roots: Iterable[models.QuerySet[models.Model]]) -> Collector:
    """A deletion collector holding ``roots`` and everything that cascades from them."""
    collector: Collector | None = None
    for queryset in roots:
        if collector is None:
            collector = Collector(using=router.db_for_write(queryset.model))
        collector.collect(queryset)  # type: ignore[arg-type]  # a QuerySet is accepted (fast deletes)
    return collector or Collector(using="default")


def collector_counts(collector: Collector) -> dict[str, int]:
    """Rows the collector would delete, by model label (a row reached along two paths counted once)."""
    keys: dict[str, set[object]] = {}
    for model, instances in collector.data.items():
        keys.setdefault(model._meta.label, set()).update(instance.pk for instance in instances)
    for queryset in collector.fast_deletes:
        keys.setdefault(queryset.model._meta.label, set()).update(queryset.values_list("pk", flat=True))
    return {label: len(found) for label, found in keys.items() if found}


def counts_lines(counts: dict[str, int]) -> list[str]:
    """``{"annotation.Response": 120, ...}`` as ["120 replies", ...], in the order of ROW_NAMES."""
    order = list(ROW_NAMES)
    lines = []
    for label in sorted(
        counts, key=lambda label: (order.index(label) if label in order else len(order), label)
    ):
        count = counts[label]
        if not count:
            continue
        singular, plural = ROW_NAMES.get(label, (label, label))
        lines.append(f"{count:,} {singular if count == 1 else plural}")
    return lines
