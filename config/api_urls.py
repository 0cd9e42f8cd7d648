"""The REST API: every app contributes its own url patterns under /api/."""

from django.urls import include, path

urlpatterns = [
    path("", include("annotation.api_urls")),
    path("", include("scoring.api_urls")),
    path("", include("correlation.api_urls")),
]
