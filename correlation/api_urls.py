from django.urls import path

from correlation.report.api import StudyCorrelationsApi
from kernel import url_converters  # noqa: F401  (registers <id:...>)

urlpatterns = [
    path(
        "studies/<id:study_id>/correlations/",
        StudyCorrelationsApi.as_view(),
        name="api-study-correlations",
    ),
]
