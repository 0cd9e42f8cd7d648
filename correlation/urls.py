from django.urls import path, register_converter

from correlation.benchmark import views as benchmark_views
from correlation.conversations import views as conversations_views
from correlation.report import views as report_views
from kernel import url_converters  # noqa: F401  (registers <id:...>)


class _FigureName:
    regex = "[a-z0-9][a-z0-9-]{0,150}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(_FigureName, "figure")

app_name = "correlation"
urlpatterns = [
    path("benchmark/", benchmark_views.benchmark_page, name="benchmark"),
    path("<id:study_id>/", report_views.study_report, name="study-report"),
    path("<id:study_id>/status.json", report_views.report_status, name="study-report-status"),
    path("<id:study_id>/figures.json", report_views.report_figures, name="study-report-figures"),
    path(
        "<id:study_id>/figures/<figure:name>.png",
        report_views.report_figure_image,
        {"fmt": "png"},
        name="figure-png",
    ),
    path(
        "<id:study_id>/figures/<figure:name>.svg",
        report_views.report_figure_image,
        {"fmt": "svg"},
        name="figure-svg",
    ),
    path("<id:study_id>/retry", report_views.report_retry_view, name="study-report-retry"),
    path("<id:study_id>/compute", report_views.report_compute_view, name="study-report-compute"),
    path("<id:study_id>/correlations.csv", report_views.study_report_csv, name="study-report-csv"),
    path("<id:study_id>/correlations.json", report_views.study_report_json, name="study-report-json"),
    path("<id:study_id>/scores.csv", report_views.study_item_scores, name="study-item-scores"),
    path("<id:study_id>/report.json", report_views.report_document_download, name="study-report-document"),
    path("<id:study_id>/tables.tex", report_views.report_latex_download, name="study-report-latex"),
    path(
        "<id:study_id>/tables/<slug:section>.csv",
        report_views.report_table_download,
        name="study-report-table",
    ),
    path("<id:study_id>/bundle.zip", report_views.report_bundle_view, name="study-report-bundle"),
    path(
        "<id:study_id>/conversations/",
        conversations_views.study_conversations_page,
        name="study-conversations",
    ),
    path(
        "<id:study_id>/conversations/<path:conversation>/",
        conversations_views.study_conversation_page,
        name="study-conversation",
    ),
]
