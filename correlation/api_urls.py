from django.urls import path

from config import url_converters  # noqa: F401  (registers <id:...>)
from correlation.api import StudyCorrelationsApi

urlpatterns = [
    path(
        "studies/<id:study_id>/correlations/",
        StudyCorrelationsApi.as_view(),
        name="api-study-correlations",
    ),
]
