from django.urls import path, register_converter

from correlation import views, views_conversations
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
    path("<id:study_id>/", views.study_report, name="study-report"),
    path("<id:study_id>/status.json", views.report_status, name="study-report-status"),
    path("<id:study_id>/figures.json", views.report_figures, name="study-report-figures"),
    path(
        "<id:study_id>/figures/<figure:name>.png",
        views.report_figure_image,
        {"fmt": "png"},
        name="figure-png",
    ),
    path(
        "<id:study_id>/figures/<figure:name>.svg",
        views.report_figure_image,
        {"fmt": "svg"},
        name="figure-svg",
    ),
    path("<id:study_id>/retry", views.report_retry_view, name="study-report-retry"),
    path("<id:study_id>/compute", views.report_compute_view, name="study-report-compute"),
    path("<id:study_id>/correlations.csv", views.study_report_csv, name="study-report-csv"),
    path("<id:study_id>/correlations.json", views.study_report_json, name="study-report-json"),
    path("<id:study_id>/scores.csv", views.study_item_scores, name="study-item-scores"),
    path("<id:study_id>/report.json", views.report_document_download, name="study-report-document"),
    path("<id:study_id>/tables.tex", views.report_latex_download, name="study-report-latex"),
    path("<id:study_id>/tables/<slug:section>.csv", views.report_table_download, name="study-report-table"),
    path("<id:study_id>/bundle.zip", views.report_bundle_view, name="study-report-bundle"),
    path(
        "<id:study_id>/conversations/",
        views_conversations.study_conversations_page,
        name="study-conversations",
    ),
    path(
        "<id:study_id>/conversations/<path:conversation>/",
        views_conversations.study_conversation_page,
        name="study-conversation",
    ),
]
