from django.urls import path

from kernel import url_converters  # noqa: F401  (registers <id:...>)
from scoring.external import api as external_api
from scoring.judges import api as judges_api
from scoring.judges import preview_api as judge_preview_api
from scoring.runs import api as runs_api
from scoring.score_files import api as score_files_api
from scoring.training import api as training_api
from scoring.vectors import api as vectors_api

urlpatterns = [
    path("metrics/", runs_api.MetricListApi.as_view(), name="api-metric-list"),
    path("score/", score_files_api.ScoreBatchApi.as_view(), name="api-score-batch"),
    path("trained-models/", training_api.TrainedModelListApi.as_view(), name="api-trained-model-list"),
    path(
        "studies/<id:study_id>/scoring-runs/",
        runs_api.StudyScoringRunsApi.as_view(),
        name="api-study-scoring-runs",
    ),
    path("scoring-runs/<id:run_id>/", runs_api.ScoringRunDetailApi.as_view(), name="api-scoring-run-detail"),
    path(
        "scoring-runs/<id:run_id>/cancel/",
        runs_api.ScoringRunCancelApi.as_view(),
        name="api-scoring-run-cancel",
    ),
    path("studies/<id:study_id>/scores/", runs_api.StudyScoresApi.as_view(), name="api-study-scores"),
    path(
        "studies/<id:study_id>/metric-scores/",
        external_api.StudyExternalScoresApi.as_view(),
        name="api-study-external-scores",
    ),
    path(
        "studies/<id:study_id>/metric-scores/<id:signature_id>/",
        external_api.StudyExternalMetricApi.as_view(),
        name="api-study-external-metric",
    ),
]

# Training jobs: start a training, follow it, cancel it (scoring/training/api.py).

urlpatterns += [
    path("training-jobs/", training_api.TrainingJobListApi.as_view(), name="api-training-job-list"),
    path(
        "training-jobs/<id:job_id>/",
        training_api.TrainingJobDetailApi.as_view(),
        name="api-training-job-detail",
    ),
    path(
        "training-jobs/<id:job_id>/cancel/",
        training_api.TrainingJobCancelApi.as_view(),
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

# LLM judges: the models by name, the prompt templates, a judge's preview and estimate (scoring/judges/).
urlpatterns += [
    path("judge-models/", judges_api.JudgeModelsApi.as_view(), name="api-judge-models"),
    path("judge-templates/", judges_api.JudgeTemplateListApi.as_view(), name="api-judge-templates"),
    path(
        "judge-templates/<slug:name>/",
        judges_api.JudgeTemplateDetailApi.as_view(),
        name="api-judge-template-detail",
    ),
    path(
        "studies/<id:study_id>/judge-preview/",
        judge_preview_api.StudyJudgePreviewApi.as_view(),
        name="api-study-judge-preview",
    ),
    path(
        "judge-previews/<id:preview_id>/",
        judge_preview_api.JudgePreviewDetailApi.as_view(),
        name="api-judge-preview-detail",
    ),
    path(
        "studies/<id:study_id>/judge-estimate/",
        judge_preview_api.StudyJudgeEstimateApi.as_view(),
        name="api-study-judge-estimate",
    ),
]
