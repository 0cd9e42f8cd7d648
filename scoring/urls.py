from django.urls import path

from kernel import url_converters  # noqa: F401  (registers <id:...>)
from scoring.external import views as external_views
from scoring.judges import views as judges_views
from scoring.runs import views as runs_views
from scoring.training import views as training_views
from scoring.vectors import views as vectors_views

app_name = "scoring"
urlpatterns = [
    path("studies/<id:study_id>/runs/", runs_views.scoring_run_start, name="run-start"),
    path("studies/<id:study_id>/models/", runs_views.study_models_choose, name="study-models"),
    path("runs/<id:run_id>/cancel/", runs_views.scoring_run_cancel_view, name="run-cancel"),
    path(
        "studies/<id:study_id>/training-jobs/", training_views.training_job_start, name="training-job-start"
    ),
    path("training-jobs/<id:job_id>/", training_views.training_job_detail, name="training-job"),
    path(
        "training-jobs/<id:job_id>/cancel/",
        training_views.training_job_cancel_view,
        name="training-job-cancel",
    ),
    path("models/", training_views.trained_models_list, name="trained-models"),
    path(
        "studies/<id:study_id>/metric-scores/",
        external_views.external_scores_upload,
        name="external-scores-import",
    ),
    path(
        "studies/<id:study_id>/metric-scores/<id:signature_id>/delete/",
        external_views.external_scores_delete,
        name="external-scores-delete",
    ),
]

# A researcher's own word vectors (docs/word-vectors.md): the list with its upload form, and delete.
urlpatterns += [
    path("word-vectors/", vectors_views.word_vectors_list, name="word-vectors"),
    path(
        "word-vectors/<slug:name>/delete/", vectors_views.word_vectors_delete_view, name="word-vectors-delete"
    ),
]

# LLM judges' prompt templates: the shipped recipes and each researcher's own (scoring/judges/views.py).
urlpatterns += [
    path("judge-templates/", judges_views.judge_templates_list, name="judge-templates"),
    path("judge-templates/new/", judges_views.judge_template_new, name="judge-template-new"),
    path("judge-templates/<slug:name>/", judges_views.judge_template_detail, name="judge-template"),
    path("judge-templates/<slug:name>/edit/", judges_views.judge_template_edit, name="judge-template-edit"),
    path(
        "judge-templates/<slug:name>/delete/",
        judges_views.judge_template_delete_view,
        name="judge-template-delete",
    ),
]
