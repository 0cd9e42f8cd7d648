"""Importing corpus and rating files into a study, all or nothing.

One service for the command line (import_study), the web form and the REST API: parse every file
(annotation.importers, no database), check the records against the study, then write everything in
one transaction with bulk inserts. A rejected import raises ImportRejected and changes nothing.
Formats and their sources (Tao et al. (2018) section 4.1, Gupta et al. (2019) sections 3 and 5.1.1): docs/import-formats.md.

Every row the import creates points back to its :class:`StudyImport` record (``source_import``), so the
import can be undone (annotation/services/import_undo.py). A large import runs the same function in a
Celery worker (annotation/services/import_jobs.py), which follows it through ``progress`` and finishes
its job row inside the import's transaction through ``before_commit``. On PostgreSQL the transaction ends
with an ANALYZE of the tables the import filled, so that a study is not planned as empty right after a
large import (kernel/table_statistics.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import User
from django.db import DatabaseError, models, transaction

from annotation.importers import ImportFile, ImportProblem, ImportRejected
from annotation.importers.formats import FORMATS
from annotation.importers.planning import ContextTarget, ImportPlan, import_plan
from annotation.importers.records import ParsedImport, text_key
from annotation.importers.study_state import ExistingContext, QuestionInfo, StudyState
from annotation.models import (
    Annotator,
    AnnotatorOrigin,
    DialogContext,
    ImportedMeanRating,
    Rating,
    Reference,
    Response,
    Study,
    StudyImport,
    System,
    WorkItem,
)
from annotation.services.work_items import work_items_sync
from kernel.data_version import study_data_changed
from kernel.importing.problems import ProblemLog
from kernel.table_statistics import table_statistics_refresh

# Rows per INSERT (Django lowers it further where the database limits bound parameters, as SQLite does):
# bulk inserts are what keep the 33,700 references of multireftest.json to a few seconds.
BATCH_SIZE = 500
READING, CHECKING, WRITING = "reading", "checking", "writing"

# (stage, done, total): lines read of all files, then rows written of all the import creates.
ImportProgress = Callable[[str, int, int], None]
ModelT = TypeVar("ModelT", bound=models.Model)


def study_import(
    *,
    study: Study,
    format: str,
    files: Sequence[ImportFile],
    user: User | None = None,
    question: str | None = None,
    progress: ImportProgress | None = None,
    before_commit: Callable[[StudyImport], None] | None = None,
) -> StudyImport:
    """Import ``files`` in ``format`` into ``study``; ``question`` receives ratings of formats that name
    no question (default: the study's first). Raises ImportRejected, with every problem found, instead.

    ``progress`` is told how far reading and writing are; ``before_commit`` is called with the new record
    inside the transaction, last (an exception there rolls the whole import back)."""
    spec = FORMATS.get(format)
    if spec is None:
        known = ", ".join(FORMATS)
        raise ImportRejected(
            [ImportProblem("", None, None, f'unknown format "{format}"; choose one of {known}')]
        )
    if not files:
        raise ImportRejected([ImportProblem("", None, None, "no files were given")])
    limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
    too_large = [
        ImportProblem(
            file.basename, None, None, f"the file is {len(file.data):,} bytes; the limit is {limit:,}"
        )
        for file in files
        if len(file.data) > limit
    ]
    if too_large:
        raise ImportRejected(too_large)

    log = ProblemLog()
    if progress is not None:
        log.on_line = _line_progress(files, progress)
    parsed = spec.parse(files, log)
    if not log.problems and not parsed.contexts and not parsed.replies:
        log.problem(", ".join(file.basename for file in files), None, None, "no records found to import")
    try:
        # The check and the writes share one transaction, so nothing can slip in between them; the
        # database error of a write that fails anyway (a concurrent import's IntegrityError, or any other
        # refusal: PostgreSQL reports a trigger's or a bad value's as ProgrammingError or DataError) is
        # caught outside the atomic block, after the rollback.
        with transaction.atomic():
            Study.objects.select_for_update().filter(pk=study.pk).first()  # one import per study at a time
            if progress is not None:
                progress(CHECKING, 0, 0)
            state = _study_state(study=study, parsed=parsed)
            plan = import_plan(parsed=parsed, state=state, question=question, log=log)
            log.raise_if_any()
            record = StudyImport.objects.create(
                study=study,
                format=format,
                filenames=[file.basename for file in files],
                counts=plan.counts,
                warnings=log.all_warnings(),
                created_by=user,
                tracked=True,
            )
            written = _plan_write(study=study, plan=plan, state=state, record=record, progress=progress)
            study_data_changed(study_id=study.pk)  # once per import, after it commits
            # New replies and contexts join the annotation queues at once.
            written[WorkItem] = sum(work_items_sync(study=study).values())
            # Last of the writes: the planner's statistics count the new rows from the moment they commit,
            # even where autovacuum analysed a table while they were being written (kernel/table_statistics.py).
            table_statistics_refresh(written=written)
            if before_commit is not None:
                before_commit(record)
            return record
    except DatabaseError as error:
        problem = ImportProblem(
            "", None, None, f"the database refused the import ({error}); nothing was saved"
        )
        raise ImportRejected([problem]) from error


def _study_state(*, study: Study, parsed: ParsedImport) -> StudyState:
    """The study's rows the import may reuse or collide with, one query per table."""
    state = StudyState(
        questions=[
            QuestionInfo(pk=pk, name=name, scale_min=low, scale_max=high)
            for pk, name, low, high in study.questions.order_by("position", "id").values_list(
                "pk", "name", "scale_min", "scale_max"
            )
        ]
    )
    positions = []
    for pk, external_id, turns, position in DialogContext.objects.filter(study=study).values_list(
        "pk", "external_id", "turns", "position"
    ):
        positions.append(position)
        if external_id:
            state.contexts_by_external_id[external_id] = ExistingContext(pk=pk, turns=turns)
        else:
            state.contexts_without_id[pk] = ExistingContext(pk=pk, turns=turns)
        state.contexts_by_text_key.setdefault(text_key(turns), pk)
    state.next_context_position = max(positions, default=-1) + 1
    if positions:
        for context, text in Reference.objects.filter(context__study=study).values_list("context_id", "text"):
            state.reference_texts.setdefault(context, set()).add(text)
    state.systems = dict(System.objects.filter(study=study).values_list("name", "pk"))
    state.annotators = {
        pseudonym: (pk, origin)
        for pseudonym, pk, origin in Annotator.objects.filter(study=study).values_list(
            "pseudonym", "pk", "origin"
        )
    }
    if parsed.replies and positions:
        state.responses = set(
            Response.objects.filter(context__study=study).values_list(
                "system_id", "context_id", "sample_index"
            )
        )
    return state


def _line_progress(files: Sequence[ImportFile], progress: ImportProgress) -> Callable[[str, int], None]:
    """A ProblemLog.on_line hook that reports lines read of all files (each file's lines after the
    lines of the files before it)."""
    offsets: dict[str, int] = {}
    total = 0
    for file in files:
        offsets.setdefault(file.basename, total)
        total += file.data.count(b"\n") + (0 if file.data.endswith(b"\n") else 1)

    def on_line(name: str, line: int) -> None:
        progress(READING, min(total, offsets.get(name, 0) + line), total)

    return on_line


class _Writer:
    """Bulk inserts in batches, telling ``progress`` the rows written so far of ``total``."""

    def __init__(self, total: int, progress: ImportProgress | None) -> None:
        self.total = total
        self.done = 0
        self.progress = progress
        self.written: dict[type[models.Model], int] = {}

    def create(self, model: type[ModelT], rows: list[ModelT]) -> list[ModelT]:
        created: list[ModelT] = []
        for start in range(0, len(rows), BATCH_SIZE):
            batch = rows[start : start + BATCH_SIZE]
            created.extend(model._default_manager.bulk_create(batch))
            self.done += len(batch)
            self.written[model] = self.written.get(model, 0) + len(batch)
            if self.progress is not None:
                self.progress(WRITING, self.done, self.total)
        return created


def _plan_write(
    *,
    study: Study,
    plan: ImportPlan,
    state: StudyState,
    record: StudyImport,
    progress: ImportProgress | None,
) -> dict[type[models.Model], int]:
    """Write the plan's rows; the rows written per model."""
    total = sum(
        len(rows)
        for rows in (
            plan.contexts,
            plan.references,
            plan.systems,
            plan.annotators,
            plan.responses,
            plan.ratings,
            plan.mean_ratings,
        )
    )
    writer = _Writer(total, progress)
    made: dict[str, Any] = {"source_import": record}  # every created row names the import (undo)
    contexts = writer.create(
        DialogContext,
        [
            DialogContext(
                study=study, external_id=new.external_id, turns=new.turns, position=new.position, **made
            )
            for new in plan.contexts
        ],
    )

    def context_pk(target: ContextTarget) -> int:
        if target.existing is not None:
            return target.existing
        assert target.new is not None
        return contexts[target.new].pk

    writer.create(
        Reference,
        [
            Reference(context_id=context_pk(new.context), text=new.text, origin=new.origin, **made)
            for new in plan.references
        ],
    )
    systems, annotators = _write_systems_and_annotators(study, plan, state, writer, made)
    _write_replies_and_ratings(plan, writer, made, context_pk, systems, annotators)
    return writer.written


def _write_systems_and_annotators(
    study: Study, plan: ImportPlan, state: StudyState, writer: _Writer, made: dict[str, Any]
) -> tuple[dict[str, int], dict[str, int]]:
    """Create the plan's new systems and raters; every system's and rater's key by name, old and new."""
    systems = dict(state.systems)
    for system in writer.create(
        System,
        [
            System(study=study, name=name, is_human=is_human, **made)
            for name, is_human in plan.systems.items()
        ],
    ):
        systems[system.name] = system.pk
    annotators = {pseudonym: pk for pseudonym, (pk, _) in state.annotators.items()}
    for annotator in writer.create(
        Annotator,
        [
            Annotator(
                study=study,
                pseudonym=name,
                origin=AnnotatorOrigin.IMPORTED,
                identity_known=name not in plan.anonymous,
                **made,
            )
            for name in plan.annotators
        ],
    ):
        annotators[annotator.pseudonym] = annotator.pk
    return systems, annotators


def _write_replies_and_ratings(
    plan: ImportPlan,
    writer: _Writer,
    made: dict[str, Any],
    context_pk: Callable[[ContextTarget], int],
    systems: dict[str, int],
    annotators: dict[str, int],
) -> None:
    """Create the plan's replies, then the ratings and imported means that point at them."""
    responses = writer.create(
        Response,
        [
            Response(
                context_id=context_pk(new.context),
                system_id=systems[new.system],
                text=new.text,
                sample_index=new.sample_index,
                external_id=new.external_id,
                **made,
            )
            for new in plan.responses
        ],
    )
    writer.create(
        Rating,
        [
            Rating(
                annotator_id=annotators[new.annotator],
                response_id=responses[new.response].pk,
                question_id=new.question,
                value=new.value,
            )
            for new in plan.ratings
        ],
    )
    writer.create(
        ImportedMeanRating,
        [
            ImportedMeanRating(
                response_id=responses[new.response].pk,
                question_id=new.question,
                value=new.value,
                raters=new.raters,
            )
            for new in plan.mean_ratings
        ],
    )
