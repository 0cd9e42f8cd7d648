from django.urls import path

from correlation.benchmark.api import BenchmarkApi
from correlation.report.api import StudyCorrelationsApi
from kernel import url_converters  # noqa: F401  (registers <id:...>)

urlpatterns = [
    path("benchmarks/", BenchmarkApi.as_view(), name="api-benchmarks"),
    path(
        "studies/<id:study_id>/correlations/",
        StudyCorrelationsApi.as_view(),
        name="api-study-correlations",
    ),
]
