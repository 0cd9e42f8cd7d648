from django.urls import path

from correlation import views

app_name = "correlation"
urlpatterns = [
    path("<int:study_id>/", views.study_report, name="study-report"),
    path("<int:study_id>/correlations.csv", views.study_report_csv, name="study-report-csv"),
    path("<int:study_id>/correlations.json", views.study_report_json, name="study-report-json"),
    path("<int:study_id>/scores.csv", views.study_item_scores, name="study-item-scores"),
]
