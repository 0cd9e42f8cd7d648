from django.urls import path

from annotation import views

app_name = "annotation"
urlpatterns = [
    path("", views.study_list, name="study-list"),
    path("new/", views.study_new, name="study-new"),
    path("<int:study_id>/", views.study_detail, name="study-detail"),
    path("<int:study_id>/import/", views.study_import_upload, name="study-import"),
]
