"""Annotator pages, mounted at /work/ (see annotation/work/views.py)."""

from django.urls import path, register_converter

from annotation.joining import training_views
from annotation.joining import views as joining_views
from annotation.work import history_views, notes_views
from annotation.work import views as work_views
from kernel import url_converters  # noqa: F401  (registers <id:...>)


class TaskKindConverter:
    """The annotator tasks; anything else in that place of a URL is a 404 before any view runs."""

    regex = "rate|write|diversity|pair"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return str(value)


register_converter(TaskKindConverter, "task")

app_name = "work"
urlpatterns = [
    path("join/<str:token>/", joining_views.join, name="join"),
    path("<id:study_id>/", work_views.study_work, name="study"),
    # Joining: the consent, then the qualification round (annotation/joining/training_views.py).
    path("<id:study_id>/consent/", joining_views.consent, name="consent"),
    path("<id:study_id>/training/", training_views.training, name="training"),
    path("<id:study_id>/training/<id:item_id>/", training_views.training_item, name="training-item"),
    path("<id:study_id>/<task:kind>/", work_views.task_next, name="next"),
    path("<id:study_id>/<task:kind>/back/", work_views.task_back, name="back"),
    path("<id:study_id>/<task:kind>/<id:assignment_id>/", work_views.task_item, name="item"),
    path("<id:study_id>/<task:kind>/<id:assignment_id>/skip/", work_views.task_skip, name="skip"),
    # Comments and flags on an item, and the annotator's own history.
    path("<id:study_id>/<task:kind>/<id:assignment_id>/note/", notes_views.item_note, name="note"),
    path("<id:study_id>/history/", history_views.work_history, name="history"),
]
