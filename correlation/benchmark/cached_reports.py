"""The studies' stored reports a benchmark can read instead of computing: for each study, the ready
snapshot of its current data version (so never stale: correlation/report/cache.py) whose options hold the
benchmark's cells (stats/benchmark/document_column.py). Two queries for any number of studies: the
candidate snapshots without their documents, then the chosen documents."""

from __future__ import annotations

from collections.abc import Sequence

from annotation.models import Study
from correlation.models import ReportSnapshot, SnapshotStatus
from correlation.report.cache import snapshot_key
from stats.benchmark.document_column import document_answers
from stats.benchmark.options import ACCURACIES, GROUPINGS, BenchmarkOptions
from stats.report.document import report_document_from_json
from stats.report.document_types import ReportDocument
from stats.report.types import ReportOptions


def report_options_answering(options: BenchmarkOptions) -> list[ReportOptions]:
    """The report options whose documents hold ``options``' cells, the likeliest first: the benchmark's
    resamples and seed with its grouping, then with the other groupings (a report of any grouping has the
    flat coefficients and the pairwise accuracies)."""
    order = [options.grouping, *(grouping for grouping in GROUPINGS if grouping != options.grouping)]
    if options.statistic not in ACCURACIES and options.grouping != "none":
        order = [options.grouping]  # the grouped columns are only in a report grouped the same way
    return [ReportOptions(resamples=options.resamples, seed=options.seed, grouping=g) for g in order]


def cached_report_documents(
    *, studies: Sequence[Study], options: BenchmarkOptions
) -> dict[int, ReportDocument]:
    """Study id -> the stored document of its current version that answers ``options`` (studies without
    one are left out)."""
    keys = [snapshot_key(report_options) for report_options in report_options_answering(options)]
    versions = dict(
        Study.objects.filter(pk__in=[study.pk for study in studies]).values_list("pk", "data_version")
    )
    candidates = ReportSnapshot.objects.filter(
        study_id__in=list(versions), options_key__in=keys, status=SnapshotStatus.READY
    ).values_list("pk", "study_id", "options_key", "data_version")
    chosen: dict[int, tuple[int, int]] = {}  # study id -> (preference, snapshot id)
    for pk, study_id, key, version in candidates:
        if version != versions[study_id]:
            continue
        preference = keys.index(key)
        if study_id not in chosen or preference < chosen[study_id][0]:
            chosen[study_id] = (preference, pk)
    stored = ReportSnapshot.objects.filter(pk__in=[pk for _, pk in chosen.values()]).values_list(
        "study_id", "document"
    )
    documents = {study_id: report_document_from_json(document) for study_id, document in stored}
    return {
        study_id: document for study_id, document in documents.items() if document_answers(document, options)
    }
