"""Annotator pages, mounted at /work/ (see annotation/views_work.py)."""

from django.urls import path, register_converter

from annotation import views_work


class TaskKindConverter:
    """The three annotator tasks; anything else in that place of a URL is a 404 before any view runs."""

    regex = "rate|write|diversity"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return str(value)


register_converter(TaskKindConverter, "task")

app_name = "work"
urlpatterns = [
    path("join/<str:token>/", views_work.join, name="join"),
    path("<int:study_id>/", views_work.study_work, name="study"),
    path("<int:study_id>/<task:kind>/", views_work.task_next, name="next"),
    path("<int:study_id>/<task:kind>/back/", views_work.task_back, name="back"),
    path("<int:study_id>/<task:kind>/<int:assignment_id>/", views_work.task_item, name="item"),
    path("<int:study_id>/<task:kind>/<int:assignment_id>/skip/", views_work.task_skip, name="skip"),
]
