"""Annotator pages, mounted at /work/ (see annotation/views_work.py)."""

from django.urls import path, register_converter

from annotation import views_history, views_join, views_notes, views_training, views_work
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
    path("join/<str:token>/", views_join.join, name="join"),
    path("<id:study_id>/", views_work.study_work, name="study"),
    # Joining (issue 13): the consent, then the qualification round (annotation/views_training.py).
    path("<id:study_id>/consent/", views_join.consent, name="consent"),
    path("<id:study_id>/training/", views_training.training, name="training"),
    path("<id:study_id>/training/<id:item_id>/", views_training.training_item, name="training-item"),
    path("<id:study_id>/<task:kind>/", views_work.task_next, name="next"),
    path("<id:study_id>/<task:kind>/back/", views_work.task_back, name="back"),
    path("<id:study_id>/<task:kind>/<id:assignment_id>/", views_work.task_item, name="item"),
    path("<id:study_id>/<task:kind>/<id:assignment_id>/skip/", views_work.task_skip, name="skip"),
    # Comments and flags on an item, and the annotator's own history (issue 13).
    path("<id:study_id>/<task:kind>/<id:assignment_id>/note/", views_notes.item_note, name="note"),
    path("<id:study_id>/history/", views_history.work_history, name="history"),
]
