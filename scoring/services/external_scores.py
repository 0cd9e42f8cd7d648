"""Importing metric scores computed elsewhere into a study, and deleting them again.

Researchers compare their own metrics (or USR, GRADE, an LLM judge run elsewhere) with the human scores
beside the built-in ones. The scores are stored like the app's own: one :class:`MetricScore` per reply,
under a :class:`MetricSignature` whose origin is ``external`` and whose text says so
(``usr|origin:external|sig:<the given signature>``), so every report section, comparison and export
shows them, marked external (correlation/report/loading.py).

All or nothing, like every import: the file is parsed (scoring/external/file_format.py), every row is
checked against the study (the reply exists, no second value for one reply and metric, no metric name
that collides with another spelling of one already in the study), and only then written, in one
transaction; a rejected import raises ``ImportRejected`` with every problem (file, line, field) and
changes nothing. Importing a metric again (same name and signature) replaces its values for the replies
in the file; replies not in the file keep theirs. The study's data version is bumped after the commit,
so a cached report is recomputed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, transaction

from annotation.models import Response, Study
from kernel.data_version import study_data_changed
from kernel.importing.problems import ImportFile, ImportProblem, ImportRejected, ProblemLog
from scoring.external.file_format import (
    CONTEXT_ID,
    METRIC,
    RESPONSE_ID,
    SYSTEM,
    ExternalScoreRow,
    external_metric_label,
    external_scores_parse,
    external_signature,
    metric_name_key,
)
from scoring.models import MetricOrigin, MetricScore, MetricSignature

BATCH_SIZE = 500


class ExternalMetricNotFound(LookupError):
    """No external metric with that signature has scores in the study."""


@dataclass(frozen=True)
class ImportedMetric:
    """One metric of an import: its signature, how many replies it scored, how many it re-scored."""

    name: str
    signature: str
    signature_id: int
    replies: int
    replaced: int  # replies that already had a value of this signature: their value was replaced

    @property
    def label(self) -> str:
        return external_metric_label(self.name)


@dataclass(frozen=True)
class ExternalScoresImport:
    file: str
    metrics: tuple[ImportedMetric, ...]
    warnings: tuple[str, ...] = ()

    @property
    def scores(self) -> int:
        return sum(metric.replies for metric in self.metrics)

    def summary(self) -> str:
        """One line per metric, e.g. ``usr (external): 300 replies (12 values replaced); signature ...``."""
        lines = []
        for metric in self.metrics:
            replaced = f" ({metric.replaced} values replaced)" if metric.replaced else ""
            lines.append(f"{metric.label}: {metric.replies} replies{replaced}; signature {metric.signature}")
        return "\n".join(lines)


def external_scores_import(*, study: Study, file: ImportFile, format: str = "auto") -> ExternalScoresImport:
    """Import the scores of ``file`` (CSV or JSON Lines; docs/import-formats.md) into ``study``.

    Raises ``ImportRejected`` with every problem found, and writes nothing, when any row is bad."""
    limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
    if len(file.data) > limit:
        raise ImportRejected(
            [
                ImportProblem(
                    file.basename, None, None, f"the file is {len(file.data):,} bytes; the limit is {limit:,}"
                )
            ]
        )
    log = ProblemLog()
    rows = external_scores_parse(file, log, format=format)
    if not rows and not log.problems:
        log.problem(file.basename, None, None, "no scores found to import")
    try:
        with transaction.atomic():
            Study.objects.select_for_update().filter(pk=study.pk).first()  # one import per study at a time
            targets = _resolved(study, rows, log)
            warnings = _checked_names(study, rows, log)
            log.raise_if_any()
            metrics = _written(study, rows, targets)
            study_data_changed(study_id=study.pk)  # after the commit: the cached report is recomputed
    except DatabaseError as error:
        problem = ImportProblem(
            "", None, None, f"the database refused the import ({error}); nothing was saved"
        )
        raise ImportRejected([problem]) from error
    return ExternalScoresImport(file=file.basename, metrics=tuple(metrics), warnings=tuple(warnings))


@transaction.atomic
def external_metric_delete(*, study: Study, signature_id: int) -> int:
    """Delete the study's scores of the external metric with signature ``signature_id``; the number
    deleted. The signature itself goes too once no study has a score of it. Raises
    :class:`ExternalMetricNotFound` when the study has none (a built-in metric's scores are never
    deleted here)."""
    scores = MetricScore.objects.filter(
        response__context__study=study, signature_id=signature_id, signature__origin=MetricOrigin.EXTERNAL
    )
    deleted, _ = scores.delete()
    if not deleted:
        raise ExternalMetricNotFound(
            f"the study has no scores of an external metric with signature {signature_id}"
        )
    MetricSignature.objects.filter(
        pk=signature_id, origin=MetricOrigin.EXTERNAL, scores__isnull=True, system_scores__isnull=True
    ).delete()
    study_data_changed(study_id=study.pk)
    return deleted


# --- checking against the study --------------------------------------------------------------------------


@dataclass
class _Replies:
    """The study's replies as an import names them, read in one query."""

    by_reply_id: dict[str, list[int]]
    ids: set[int]
    by_context_system: dict[tuple[str, str], list[int]]
    contexts: set[str]
    systems: set[str]


def _study_replies(study: Study) -> _Replies:
    replies = _Replies(by_reply_id={}, ids=set(), by_context_system={}, contexts=set(), systems=set())
    rows = Response.objects.filter(context__study=study).values_list(
        "pk", "external_id", "context__external_id", "system__name"
    )
    for pk, external_id, context_id, system in rows:
        replies.ids.add(pk)
        if external_id:
            replies.by_reply_id.setdefault(external_id, []).append(pk)
        if context_id:
            replies.contexts.add(context_id)
            replies.by_context_system.setdefault((context_id, system), []).append(pk)
    replies.systems = set(study.systems.values_list("name", flat=True))
    return replies


def _resolved(study: Study, rows: Sequence[ExternalScoreRow], log: ProblemLog) -> list[int | None]:
    """The reply of each row (None where it names none of the study's, with the problem logged), and a
    problem for a second value of one reply and metric, however the two rows named the reply."""
    replies = _study_replies(study)
    targets: list[int | None] = []
    first: dict[tuple[int, str], int] = {}
    for row in rows:
        target = _reply_of(row, replies, log)
        targets.append(target)
        if target is None:
            continue
        line = first.setdefault((target, row.metric), row.line)
        if line != row.line:
            log.problem(
                row.file,
                row.line,
                row.reply_field,
                f'a second value of "{row.metric}" for this reply (response {target}; the first is on line {line})',
            )
    return targets


def _reply_of(row: ExternalScoreRow, replies: _Replies, log: ProblemLog) -> int | None:
    if row.response_id is not None:
        if row.response_id in replies.ids:
            return row.response_id
        log.problem(row.file, row.line, RESPONSE_ID, f"no reply of this study has the id {row.response_id}")
        return None
    if row.reply_id:
        found = replies.by_reply_id.get(row.reply_id, [])
        if len(found) == 1:
            return found[0]
        message = (
            f'no reply of this study has the id "{row.reply_id}" (reply_id is the id the reply was imported '
            "with; response_id is the app's own id)"
            if not found
            else f'{len(found)} replies of this study have the id "{row.reply_id}": name each by response_id'
        )
        log.problem(row.file, row.line, row.reply_field, message)
        return None
    if row.context_id not in replies.contexts:
        log.problem(row.file, row.line, CONTEXT_ID, f'no context of this study has the id "{row.context_id}"')
        return None
    if row.system not in replies.systems:
        known = ", ".join(f'"{name}"' for name in sorted(replies.systems)[:10])
        log.problem(
            row.file,
            row.line,
            SYSTEM,
            f'no system of this study is named "{row.system}" (its systems: {known})',
        )
        return None
    found = replies.by_context_system.get((row.context_id, row.system), [])
    if len(found) == 1:
        return found[0]
    message = (
        f'system "{row.system}" has no reply to context "{row.context_id}"'
        if not found
        else f'system "{row.system}" has {len(found)} replies to context "{row.context_id}": name each by '
        "reply_id or response_id"
    )
    log.problem(row.file, row.line, SYSTEM, message)
    return None


def _checked_names(study: Study, rows: Sequence[ExternalScoreRow], log: ProblemLog) -> list[str]:
    """A problem for a metric spelled otherwise than an external metric already in the study ("USR" and
    "usr" would read as one metric); a warning for one imported again with another signature (both are
    kept, and the report tells them apart by their signatures)."""
    existing = list(
        MetricSignature.objects.filter(origin=MetricOrigin.EXTERNAL, scores__response__context__study=study)
        .values_list("name", "text")
        .distinct()
    )
    spellings = {metric_name_key(name): name for name, _ in existing}
    texts = {name: {text for other, text in existing if other == name} for name, _ in existing}
    warnings: list[str] = []
    reported: set[str] = set()
    for row in rows:
        if row.metric in reported:
            continue
        known = spellings.get(metric_name_key(row.metric))
        if known is not None and known != row.metric:
            reported.add(row.metric)
            log.problem(
                row.file,
                row.line,
                METRIC,
                f'"{row.metric}" collides with the external metric "{known}" already in the study: spell it '
                f'"{known}" to replace its values, or give it another name',
            )
            continue
        text, _ = external_signature(row.metric, row.signature)
        others = texts.get(row.metric, set()) - {text}
        if others:
            reported.add(row.metric)
            warnings.append(
                f'"{row.metric}" is already in the study with the signature {", ".join(sorted(others))}; both '
                "are kept and shown apart: delete the old one if the new one replaces it"
            )
    return warnings


# --- writing -----------------------------------------------------------------------------------------


def _written(
    study: Study, rows: Sequence[ExternalScoreRow], targets: Sequence[int | None]
) -> list[ImportedMetric]:
    by_metric: dict[str, list[tuple[int, float]]] = {}
    signatures: dict[str, str] = {}
    for row, target in zip(rows, targets, strict=True):
        assert target is not None  # every row resolved: the log had no problem
        by_metric.setdefault(row.metric, []).append((target, row.value))
        signatures[row.metric] = row.signature
    imported = []
    for metric, values in by_metric.items():
        signature = _signature(metric, signatures[metric])
        before = set(
            MetricScore.objects.filter(signature=signature, response__context__study=study).values_list(
                "response_id", flat=True
            )
        )
        replaced = sum(1 for response_id, _ in values if response_id in before)
        MetricScore.objects.bulk_create(
            [
                MetricScore(response_id=response_id, signature=signature, value=value)
                for response_id, value in values
            ],
            batch_size=BATCH_SIZE,
            update_conflicts=True,
            unique_fields=["response", "signature"],
            update_fields=["value", "computed_at"],
        )
        imported.append(
            ImportedMetric(
                name=metric,
                signature=signature.text,
                signature_id=signature.pk,
                replies=len(values),
                replaced=replaced,
            )
        )
    return imported


def _signature(metric: str, given: str) -> MetricSignature:
    text, parameters = external_signature(metric, given)
    signature, _ = MetricSignature.objects.get_or_create(
        text=text,
        defaults={
            "name": metric,
            "parameters": parameters,
            "origin": MetricOrigin.EXTERNAL,
            "version": "",
        },
    )
    return signature
