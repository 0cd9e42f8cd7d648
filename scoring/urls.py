from django.urls import path

from scoring import views

app_name = "scoring"
urlpatterns = [
    path("studies/<int:study_id>/runs/", views.scoring_run_start, name="run-start"),
    path("studies/<int:study_id>/models/", views.study_models_choose, name="study-models"),
    path("runs/<int:run_id>/cancel/", views.scoring_run_cancel_view, name="run-cancel"),
]
