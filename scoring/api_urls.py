from django.urls import path

from kernel import url_converters  # noqa: F401  (registers <id:...>)
from scoring import api, api_external, api_score_files, api_training
from scoring.vectors import api as vectors_api

urlpatterns = [
    path("metrics/", api.MetricListApi.as_view(), name="api-metric-list"),
    path("score/", api_score_files.ScoreBatchApi.as_view(), name="api-score-batch"),
    path("trained-models/", api.TrainedModelListApi.as_view(), name="api-trained-model-list"),
    path(
        "studies/<id:study_id>/scoring-runs/",
        api.StudyScoringRunsApi.as_view(),
        name="api-study-scoring-runs",
    ),
    path("scoring-runs/<id:run_id>/", api.ScoringRunDetailApi.as_view(), name="api-scoring-run-detail"),
    path(
        "scoring-runs/<id:run_id>/cancel/", api.ScoringRunCancelApi.as_view(), name="api-scoring-run-cancel"
    ),
    path("studies/<id:study_id>/scores/", api.StudyScoresApi.as_view(), name="api-study-scores"),
    path(
        "studies/<id:study_id>/metric-scores/",
        api_external.StudyExternalScoresApi.as_view(),
        name="api-study-external-scores",
    ),
    path(
        "studies/<id:study_id>/metric-scores/<id:signature_id>/",
        api_external.StudyExternalMetricApi.as_view(),
        name="api-study-external-metric",
    ),
]

# Training jobs (issue 14): start a training, follow it, cancel it (scoring/api_training.py).

urlpatterns += [
    path("training-jobs/", api_training.TrainingJobListApi.as_view(), name="api-training-job-list"),
    path(
        "training-jobs/<id:job_id>/",
        api_training.TrainingJobDetailApi.as_view(),
        name="api-training-job-detail",
    ),
    path(
        "training-jobs/<id:job_id>/cancel/",
        api_training.TrainingJobCancelApi.as_view(),
        name="api-training-job-cancel",
    ),
]

# A researcher's own word vectors: list, upload (converted by a worker), follow, delete (scoring/vectors/api.py).
urlpatterns += [
    path("word-vectors/", vectors_api.WordVectorsListApi.as_view(), name="api-word-vectors"),
    path(
        "word-vectors/<slug:name>/",
        vectors_api.WordVectorsDetailApi.as_view(),
        name="api-word-vectors-detail",
    ),
]
