"""The correlation report page, its live status, figures and downloads (owner researchers only; 404 for
everyone else). Views translate HTTP; the work is in correlation/report/cache.py and the exports."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.models import Question, Study
from correlation.bundle.archive import bundle_filename
from correlation.bundle.jobs import bundle_content, bundle_request, bundle_state
from correlation.conversations.selectors import study_has_conversations
from correlation.models import SnapshotStatus
from correlation.report.cache import (
    ReportView,
    report_compute_requested,
    report_for_display,
    report_retry,
)
from correlation.report.exports import correlation_rows_as_csv, correlation_rows_as_json, report_table_csv
from correlation.report.figure_export import FigureExportError, figure_image
from correlation.report.item_scores import study_item_scores_csv
from correlation.report.served import ServedReport, served_report, stale_asked
from correlation.selectors import studies_reportable_by, study_questions
from scoring.selectors import system_metric_table
from stats.figures.report import reply_texts
from stats.figures.report import report_figures as figure_specs
from stats.latex import report_latex
from stats.report.csv_tables import report_table_names
from stats.report.document import document_as_json, report_document_from_json
from stats.report.document_types import MetricRow, ReportDocument
from stats.report.page import question_slice
from stats.report.plot_types import question_plots, report_plots_from_json
from stats.report.types import OPTION_KEYS, OptionError, ReportOptions

AGREEMENT_ROWS = (
    ("Krippendorff's α (ordinal)", "krippendorff_alpha_ordinal"),
    ("Krippendorff's α (interval)", "krippendorff_alpha_interval"),
    ("Krippendorff's α (ordinal), before the filter", "krippendorff_alpha_ordinal_before_filter"),
    ("Fleiss' κ", "fleiss_kappa"),
    ("Intraclass correlation", "icc"),
    ("Cohen's κ, mean over rater pairs", "cohen_kappa_mean"),
)


@login_required
def study_report(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    questions = study_questions(study=study)
    question = _chosen_question(request, questions) or next(iter(questions), None)
    options, option_error = _options(request)
    view = report_for_display(study=study, options=options)
    context = _page_context(request, study, questions, question, options, view)
    context["option_error"] = option_error
    if not request.GET.get("fragment"):
        context["has_conversations"] = study_has_conversations(study=study)
    template = (
        "correlation/_report_body.html" if request.GET.get("fragment") else "correlation/study_report.html"
    )
    return render(request, template, context)


@login_required
def report_status(request: HttpRequest, study_id: int) -> JsonResponse:
    """What the page polls: the study's data version, the version on screen, and the computation."""
    study = _reportable_study(request, study_id)
    options, _ = _options(request)
    view = report_for_display(study=study, options=options)
    current = view.current
    bundle = bundle_state(snapshot=view.shown) if view.fresh and view.shown else None
    return JsonResponse(
        {
            "bundle": {
                "status": bundle.status,
                "stage": bundle.stage,
                "error": bundle.error,
                "size": bundle.size,
            }
            if bundle
            else None,
            "data_version": view.data_version,
            "shown_version": view.shown.data_version if view.shown else None,
            "fresh": view.fresh,
            "status": current.status if current else None,
            "progress": current.progress_percent if current else 0,
            "stage": current.stage if current else "",
            "error": current.error if current else "",
        }
    )


@require_POST
@login_required
def report_compute_view(request: HttpRequest, study_id: int) -> HttpResponse:
    """The page asks for the report of the current data (correlation/report/cache.py): a small study's is
    computed in this request while the page polls its progress. JSON for the page's script; a redirect
    back to the page for the form shown without JavaScript."""
    study = _reportable_study(request, study_id)
    options, _ = _options(request)
    view = report_compute_requested(study=study, options=options)
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"fresh": view.fresh, "status": view.current.status if view.current else None})
    return redirect(f"{reverse('correlation:study-report', args=[study.pk])}?{request.GET.urlencode()}")


@login_required
def report_figures(request: HttpRequest, study_id: int) -> JsonResponse:
    """The figures of one question of the report on screen (``?version=`` pins the version)."""
    study = _reportable_study(request, study_id)
    questions = study_questions(study=study)
    question = _chosen_question(request, questions) or next(iter(questions), None)
    options, _ = _options(request)
    view = report_for_display(study=study, options=options)
    if view.shown is None or question is None:
        raise Http404("no report is ready yet")
    document, plots = report_document_from_json(view.shown.document), report_plots_from_json(view.shown.plots)
    figures = figure_specs(document, plots, question.name, study.name)
    return JsonResponse(
        {
            "data_version": view.shown.data_version,
            "question": question.name,
            "texts": reply_texts(plots, question.name),
            "raters": question_plots(plots, question.name).get("raters", []),
            "figures": [spec.as_dict() for spec in figures],
        }
    )


@login_required
def report_figure_image(request: HttpRequest, study_id: int, name: str, fmt: str) -> HttpResponse:
    """One figure as PNG or SVG, rendered server-side (kaleido and the system Chromium)."""
    study = _reportable_study(request, study_id)
    questions = study_questions(study=study)
    question = _chosen_question(request, questions) or next(iter(questions), None)
    if question is None:
        raise Http404("no such question")
    options, _ = _options(request)
    served = _served(request, study, options)
    if served.snapshot is None:
        return _pending(served)
    snapshot = served.snapshot
    figures = {
        spec.name: spec
        for spec in figure_specs(
            report_document_from_json(snapshot.document),
            report_plots_from_json(snapshot.plots),
            question.name,
            study.name,
        )
    }
    spec = figures.get(name)
    if spec is None:
        raise Http404("no such figure in this report")
    content_type = "image/png" if fmt == "png" else "image/svg+xml"
    try:
        image = figure_image(spec.figure, fmt)
    except FigureExportError as error:  # no Chromium on this server: say so rather than fail blankly
        return HttpResponse(
            f"This server cannot render figures ({error}); use the camera icon of the figure instead.",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
    return _attachment(image, content_type, f"{spec.filename}.{fmt}", served.headers)


@login_required
def report_document_download(request: HttpRequest, study_id: int) -> HttpResponse:
    """The whole report document (every question, every section) as JSON."""
    study = _reportable_study(request, study_id)
    served = _served(request, study, _options(request)[0])
    if served.snapshot is None:
        return _pending(served)
    return _attachment(
        document_as_json(report_document_from_json(served.snapshot.document)),
        "application/json",
        f"study-{study.pk}-report.json",
        served.headers,
    )


@login_required
def report_latex_download(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    served = _served(request, study, _options(request)[0])
    if served.snapshot is None:
        return _pending(served)
    text = report_latex(report_document_from_json(served.snapshot.document), study_name=study.name)
    return _attachment(text, "application/x-tex", f"study-{study.pk}-tables.tex", served.headers)


@login_required
def report_table_download(request: HttpRequest, study_id: int, section: str) -> HttpResponse:
    study = _reportable_study(request, study_id)
    served = _served(request, study, _options(request)[0])
    if served.snapshot is None:
        return _pending(served)
    table = report_table_csv(report_document_from_json(served.snapshot.document), section)
    if table is None:
        raise Http404("no such table")
    return _attachment(table, "text/csv", f"study-{study.pk}-{section}.csv", served.headers)


@login_required
def report_bundle_view(request: HttpRequest, study_id: int) -> HttpResponse:
    """GET: the bundle of the current report when it is built; POST: ask a worker to build it."""
    study = _reportable_study(request, study_id)
    options, _ = _options(request)
    back = f"{reverse('correlation:study-report', args=[study.pk])}?{request.GET.urlencode()}#tab-downloads"
    if request.method == "POST":
        served = _served(request, study, options)
        if served.snapshot is None or "X-Report-Stale" in served.headers:
            return _pending(served) if served.snapshot is None else redirect(back)
        bundle_request(snapshot=served.snapshot)
        return redirect(back)
    view = report_for_display(study=study, options=options)
    bundle = bundle_state(snapshot=view.shown) if view.fresh and view.shown else None
    if bundle is None or bundle.status != SnapshotStatus.READY:
        return redirect(back)
    assert view.shown is not None
    return _attachment(bundle_content(bundle=bundle), "application/zip", bundle_filename(study, view.shown))


@require_POST
@login_required
def report_retry_view(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    options, _ = _options(request)
    view = report_for_display(study=study, options=options)
    if view.current is not None and view.current.status == SnapshotStatus.FAILED:
        report_retry(snapshot=view.current)
    return redirect(f"{reverse('correlation:study-report', args=[study.pk])}?{request.GET.urlencode()}")


@login_required
def study_report_csv(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    rows = _table_rows(request, study)
    if isinstance(rows, HttpResponse):
        return rows
    return _attachment(
        correlation_rows_as_csv(rows[0]), "text/csv", f"study-{study.pk}-correlations.csv", rows[1]
    )


@login_required
def study_report_json(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    rows = _table_rows(request, study)
    if isinstance(rows, HttpResponse):
        return rows
    return _attachment(
        correlation_rows_as_json(rows[0]), "application/json", f"study-{study.pk}-correlations.json", rows[1]
    )


@login_required
def study_item_scores(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _reportable_study(request, study_id)
    return _attachment(study_item_scores_csv(study=study), "text/csv", f"study-{study.pk}-scores.csv")


def _page_context(
    request: HttpRequest,
    study: Study,
    questions: list[Question],
    question: Question | None,
    options: ReportOptions,
    view: ReportView,
) -> dict[str, Any]:
    shown = view.shown
    document = report_document_from_json(shown.document) if shown is not None and shown.document else None
    context: dict[str, Any] = {
        "study": study,
        "questions": questions,
        "question": question,
        "options": options,
        "view": view,
        "document": document,
        "query": request.GET.urlencode(),
        "option_query": _option_query(request),
        # A page that shows an older report while the current one is computed downloads what it shows.
        "download_query": "&".join(
            part
            for part in (_option_query(request), "" if view.fresh or shown is None else "stale=ok")
            if part
        ),
        "filter_choices": _filter_choices(study, options),
        "agreement_rows": AGREEMENT_ROWS,
        "bundle": bundle_state(snapshot=view.shown) if view.fresh and view.shown else None,
        "table_sections": sorted(report_table_names(document)) if document else [],
        "system_metrics": system_metric_table(study=study),
    }
    # A report shown while the next one is computed may predate the question (added since): nothing of it.
    if document is not None and question is not None and _has_question(document, question.name):
        context["report"] = question_slice(document, question.name)
    return context


def _has_question(document: ReportDocument, name: str) -> bool:
    return any(entry.get("name") == name for entry in document.get("questions") or [])


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


def _options(request: HttpRequest) -> tuple[ReportOptions, str]:
    """The report options of the request; on a bad value, the defaults and the message."""
    try:
        return ReportOptions.parse(request.GET), ""
    except OptionError as error:
        return ReportOptions(), str(error)


def _filter_choices(study: Study, options: ReportOptions) -> list[tuple[str, str]]:
    threshold = "none" if study.kappa_threshold is None else f"{study.kappa_threshold:g}"
    choices = [
        ("study", f"study setting (kappa ≥ {threshold})"),
        ("none", "none: every rating counts"),
        *((repr(value), f"kappa ≥ {value:g}") for value in (0.2, 0.3, 0.4)),
    ]
    if options.filter not in {value for value, _ in choices}:
        choices.append((options.filter, f"kappa ≥ {float(options.filter):g}"))
    return choices


def _option_query(request: HttpRequest) -> str:
    return urlencode({key: request.GET[key] for key in OPTION_KEYS if request.GET.get(key)})


def _table_rows(request: HttpRequest, study: Study) -> tuple[list[MetricRow], dict[str, str]] | HttpResponse:
    """The rows of the served report and its headers, or the 202 (or 503) to answer instead."""
    # Without ?question= a download holds every question's rows (the "question" column tells them apart).
    name = request.GET.get("question")
    if name and not any(q.name == name for q in study_questions(study=study)):
        raise Http404("no such question in this study")
    options, _ = _options(request)
    served = _served(request, study, options)
    if served.snapshot is None:
        return _pending(served)
    document = report_document_from_json(served.snapshot.document)
    return [row for row in document.get("rows", []) if not name or row["question"] == name], served.headers


def _served(request: HttpRequest, study: Study, options: ReportOptions) -> ServedReport:
    """The current report, or what to answer while a worker computes it (correlation/report/served.py)."""
    return served_report(
        study=study, options=options, stale_ok=stale_asked(request.GET), location=request.get_full_path()
    )


def _pending(served: ServedReport) -> HttpResponse:
    return JsonResponse(served.body, status=served.status, headers=served.headers)


def _attachment(
    body: str | bytes, content_type: str, filename: str, headers: dict[str, str] | None = None
) -> HttpResponse:
    charset = "; charset=utf-8" if isinstance(body, str) else ""
    response = HttpResponse(body, content_type=f"{content_type}{charset}", headers=headers)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
