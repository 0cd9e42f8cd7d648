from django.urls import path

from annotation import api

urlpatterns = [
    path("studies/", api.StudyListCreateApi.as_view(), name="api-study-list"),
    path("studies/<int:study_id>/", api.StudyDetailApi.as_view(), name="api-study-detail"),
    path("studies/<int:study_id>/imports/", api.StudyImportApi.as_view(), name="api-study-imports"),
]
