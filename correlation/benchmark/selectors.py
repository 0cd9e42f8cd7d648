"""Reads for the benchmark across studies: the requester's studies by id, and the table of the chosen metrics
on them. Each study's column is read from its stored current report when one holds the cells
(correlation/benchmark/cached_reports.py), else computed from its report inputs (correlation/report/
loading.py, without the parts that recompute metrics), with the report's default filter; either way a cell
equals what the study's own report and stats/meta compute for it."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User

from annotation.models import Study
from correlation.benchmark.cached_reports import cached_report_documents
from correlation.report.loading import report_inputs
from correlation.selectors import studies_reportable_by
from stats.benchmark.document_column import document_column, document_metrics, question_name
from stats.benchmark.options import BenchmarkOptions
from stats.benchmark.study import study_column, study_metrics
from stats.benchmark.table import BenchmarkTable, MetricKey, StudyColumn, benchmark_table
from stats.report.document_types import ReportDocument
from stats.report.types import ReportInputs

MAX_STUDIES = 50


class BenchmarkInputError(ValueError):
    """A request the benchmark cannot answer; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def study_ids_parse(values: Sequence[str]) -> list[int]:
    """Study ids from ``studies=1,2`` and/or ``studies=1&studies=2``, in order, each once."""
    ids: list[int] = []
    for raw in values:
        for part in str(raw).split(","):
            text = part.strip()
            if not text:
                continue
            if not text.isdigit() or len(text) > 18:
                raise BenchmarkInputError("studies", f'"{text}" is not a study id')
            if int(text) not in ids:
                ids.append(int(text))
    if not ids:
        raise BenchmarkInputError("studies", "name at least one study (its id)")
    if len(ids) > MAX_STUDIES:
        raise BenchmarkInputError("studies", f"at most {MAX_STUDIES} studies, not {len(ids)}")
    return ids


def benchmark_for_user(
    *,
    user: User,
    study_ids: Sequence[int],
    options: BenchmarkOptions,
    metrics: Sequence[str] = (),
    question: str | None = None,
) -> BenchmarkTable | None:
    """The table of ``metrics`` over the studies of ``study_ids`` (correlation/benchmark/query.py reads them
    from a request); ``None`` when a study is missing or not ``user``'s. Raises :class:`BenchmarkInputError`
    naming the field at fault."""
    studies = benchmark_studies(user=user, ids=study_ids)
    if studies is None:
        return None
    return metric_benchmark(studies=studies, options=options, metrics=metrics, question=question)


def benchmark_studies(*, user: User, ids: Sequence[int]) -> list[Study] | None:
    """The studies of ``ids``, in that order, when ``user`` may read the report of every one; ``None`` when
    any is missing or not theirs (the caller answers 404, as for one study's report)."""
    found = {study.pk: study for study in studies_reportable_by(user=user).filter(pk__in=list(ids))}
    if len(found) != len(set(ids)):
        return None
    return [found[study_id] for study_id in ids]


def metric_benchmark(
    *,
    studies: Sequence[Study],
    options: BenchmarkOptions,
    metrics: Sequence[str] = (),
    question: str | None = None,
    cached: bool = True,
) -> BenchmarkTable:
    """The table of ``metrics`` (names or signature texts; every metric of the studies when empty) over
    ``studies``. ``question``: a question name every study has (each study's first question when ``None``).
    A study whose current report is stored with options that hold the cells is read from it (``cached``);
    the others are computed from their report inputs: the same numbers either way."""
    documents = cached_report_documents(studies=studies, options=options) if cached else {}
    sources = [_StudySource(study, documents.get(study.pk)) for study in studies]
    if question is not None:
        lacking = [source.study.name for source in sources if question not in source.questions()]
        if lacking:
            raise BenchmarkInputError("question", f"no question named {question!r} in {', '.join(lacking)}")
    known: dict[str, MetricKey] = {}
    for source in sources:
        for key in source.metrics(question):
            known.setdefault(key.text, key)
    chosen = _chosen_metrics(list(known.values()), metrics)
    labels = _study_labels(studies)
    columns = [
        source.column(options, label=label, question=question)
        for source, label in zip(sources, labels, strict=True)
    ]
    return benchmark_table(columns, chosen, options)


class _StudySource:
    """One study's column: read from its stored report document when there is one that answers (and has
    the question), else computed from its report inputs, loaded once."""

    def __init__(self, study: Study, document: ReportDocument | None) -> None:
        self.study, self.document = study, document
        self._inputs: ReportInputs | None = None

    def inputs(self) -> ReportInputs:
        if self._inputs is None:
            self._inputs = report_inputs(study=self.study, recompute=False)
        return self._inputs

    def _readable(self, question: str | None) -> str | None:
        """The question name the document answers for ``question``, ``None`` when the inputs must."""
        return question_name(self.document, question) if self.document is not None else None

    def questions(self) -> set[str]:
        if self.document is not None:
            return {summary["name"] for summary in self.document["questions"]}
        return {question.name for question in self.inputs().questions}

    def metrics(self, question: str | None) -> list[MetricKey]:
        name = self._readable(question)
        if self.document is not None and name is not None:
            return document_metrics(self.document, name)
        return study_metrics(self.inputs(), question)

    def column(self, options: BenchmarkOptions, *, label: str, question: str | None) -> StudyColumn:
        name = self._readable(question)
        if self.document is not None and name is not None:
            return document_column(self.document, options, question=name, label=label)
        return study_column(self.inputs(), options, label=label, question=question)


def _chosen_metrics(known: list[MetricKey], wanted: Sequence[str]) -> list[MetricKey]:
    """Every known metric (by name, then signature) when nothing is asked for; else those asked for, in the
    order asked, a name standing for every signature of that name."""
    if not wanted:
        return sorted(known, key=lambda key: (key.name, key.text))
    chosen: list[MetricKey] = []
    unknown = []
    for item in wanted:
        matches = [key for key in known if item in (key.text, key.name)]
        if not matches:
            unknown.append(item)
        chosen += [key for key in sorted(matches, key=lambda key: key.text) if key not in chosen]
    if unknown:
        names = ", ".join(sorted({key.name for key in known})) or "none"
        raise BenchmarkInputError(
            "metrics", f"no study here has {', '.join(map(repr, unknown))} (their metrics: {names})"
        )
    return chosen


def _study_labels(studies: Sequence[Study]) -> list[str]:
    """Each study's name, with its id where two studies share a name (a superuser's table)."""
    names = [study.name for study in studies]
    return [f"{study.name} (#{study.pk})" if names.count(study.name) > 1 else study.name for study in studies]
