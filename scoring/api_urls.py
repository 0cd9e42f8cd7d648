from django.urls import path

from scoring import api

urlpatterns = [
    path("metrics/", api.MetricListApi.as_view(), name="api-metric-list"),
    path("trained-models/", api.TrainedModelListApi.as_view(), name="api-trained-model-list"),
    path(
        "studies/<int:study_id>/scoring-runs/",
        api.StudyScoringRunsApi.as_view(),
        name="api-study-scoring-runs",
    ),
    path("scoring-runs/<int:run_id>/", api.ScoringRunDetailApi.as_view(), name="api-scoring-run-detail"),
    path(
        "scoring-runs/<int:run_id>/cancel/", api.ScoringRunCancelApi.as_view(), name="api-scoring-run-cancel"
    ),
    path("studies/<int:study_id>/scores/", api.StudyScoresApi.as_view(), name="api-study-scores"),
]
