"""What the study page and the import job page show of imports: past imports with what undo would say,
and a job's state, progress and outcome in the words of an inline import."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from annotation.importers import ImportProblem
from annotation.models import ImportJob, ImportJobStatus, Study
from annotation.services.import_jobs import import_job_status
from kernel.importing.problems import problems_report

STAGE_WORDS = {
    "reading": "lines read",
    "checking": "checking against the study",
    "writing": "rows written",
}


COUNT_ORDER = ("contexts", "references", "systems", "responses", "annotators", "ratings", "mean_ratings")


def import_counts_text(counts: dict[str, int]) -> str:
    """An import's counters in words, zero ones left out: ``{"contexts_created": 120, "systems_reused": 1}``
    reads "120 new contexts, 1 system already in the study". Always in the same order (contexts, references,
    systems, responses, then the rest as given): PostgreSQL's jsonb does not keep a stored dict's order."""
    parts = []
    rank = {noun: index for index, noun in enumerate(COUNT_ORDER)}
    ordered = sorted(counts.items(), key=lambda entry: rank.get(entry[0].rpartition("_")[0], len(rank)))
    for key, value in ordered:
        if not value:
            continue
        noun, _, verb = key.rpartition("_")
        noun = noun.replace("_", " ") or verb
        if value == 1 and noun.endswith("s"):
            noun = noun[:-1]
        if verb == "created":
            parts.append(f"{value:,} new {noun}")
        elif verb == "reused":
            parts.append(f"{value:,} {noun} already in the study")
        else:
            parts.append(f"{value:,} {key.replace('_', ' ')}")
    return ", ".join(parts)


@dataclass(frozen=True)
class ImportJobView:
    pk: int
    filenames: list[str]
    total_bytes: int
    status: str
    status_label: str
    stage: str
    stage_words: str
    done: int
    total: int
    problems: list[str] = field(default_factory=list)  # grouped, at most PROBLEMS_SHOWN entries
    problems_summary: str = ""  # "80 problems in all."
    problems_truncated: bool = False
    error: str = ""
    summary: str = ""
    warnings: list[str] = field(default_factory=list)
    result_id: int | None = None

    @property
    def finished(self) -> bool:
        return self.status in (ImportJobStatus.SUCCEEDED, ImportJobStatus.FAILED)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "status": self.status,
            "status_label": self.status_label,
            "stage": self.stage,
            "stage_words": self.stage_words,
            "done": self.done,
            "total": self.total,
            "finished": self.finished,
            "problems": self.problems,
            "problems_summary": self.problems_summary,
            "problems_truncated": self.problems_truncated,
            "error": self.error,
            "summary": self.summary,
            "warnings": self.warnings,
            "import_id": self.result_id,
        }


def import_job_view(*, job: ImportJob) -> ImportJobView:
    progress = import_job_status(job=job)
    result = job.result
    problems = problems_report(
        [ImportProblem(**problem) for problem in job.problems], stopped=job.problems_truncated
    )
    return ImportJobView(
        pk=job.pk,
        filenames=list(job.filenames),
        total_bytes=job.total_bytes,
        status=progress.status,
        status_label=ImportJobStatus(progress.status).label,
        stage=progress.stage,
        stage_words=STAGE_WORDS.get(progress.stage, ""),
        done=progress.done,
        total=progress.total,
        problems=problems.entries,
        problems_summary=problems.summary if job.problems else "",
        problems_truncated=job.problems_truncated,
        error=job.error,
        summary=(import_counts_text(result.counts) or "nothing new") if result is not None else "",
        warnings=list(result.warnings) if result is not None else [],
        result_id=result.pk if result is not None else None,
    )


def study_import_jobs(*, study: Study) -> QuerySet[ImportJob]:
    """The study's import jobs that did not succeed (a succeeded one is listed as an import), newest first."""
    return (
        ImportJob.objects.filter(study=study)
        .exclude(status=ImportJobStatus.SUCCEEDED)
        .order_by("-created_at")
    )
