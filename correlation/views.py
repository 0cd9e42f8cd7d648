"""The correlation report page and its CSV/JSON downloads (owner researchers only; 404 for everyone else)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Question, Study
from correlation.exports import correlation_rows_as_csv, correlation_rows_as_json
from correlation.item_scores import study_item_scores_csv
from correlation.plots import report_plot_data
from correlation.selectors import studies_reportable_by, study_questions
from correlation.services import correlation_report, correlation_rows_as_dicts
from scoring.selectors import system_metric_table


@login_required
def study_report(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    questions = study_questions(study=study)
    question = _chosen_question(request, questions) or (questions[0] if questions else None)
    context: dict[str, object] = {
        "study": study,
        "questions": questions,
        "question": question,
        "system_metrics": system_metric_table(study=study),
    }
    if question is not None:
        report = correlation_report(study=study, question=question)
        context.update(
            report=report,
            summary=report.questions[0],
            plot_data=report_plot_data(report, question=question.name),
        )
    return render(request, "correlation/study_report.html", context)


@login_required
def study_report_csv(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    rows = _table_rows(request, study)
    return _attachment(correlation_rows_as_csv(rows), "text/csv", f"study-{study.pk}-correlations.csv")


@login_required
def study_report_json(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    rows = _table_rows(request, study)
    return _attachment(
        correlation_rows_as_json(rows), "application/json", f"study-{study.pk}-correlations.json"
    )


@login_required
def study_item_scores(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    return _attachment(study_item_scores_csv(study=study), "text/csv", f"study-{study.pk}-scores.csv")


def _reportable_study(request: HttpRequest, study_id: int) -> Study:
    return get_object_or_404(studies_reportable_by(user=request.user), pk=study_id)


def _chosen_question(request: HttpRequest, questions: list[Question]) -> Question | None:
    """The question named by ``?question=``; None when absent; 404 when it names no question of the study."""
    name = request.GET.get("question")
    if not name:
        return None
    for question in questions:
        if question.name == name:
            return question
    raise Http404("no such question in this study")


def _table_rows(request: HttpRequest, study: Study) -> list[dict[str, object]]:
    # Without ?question= a download holds every question's rows (the "question" column tells them apart).
    question = _chosen_question(request, study_questions(study=study))
    return correlation_rows_as_dicts(correlation_report(study=study, question=question))


def _attachment(body: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
