from django.urls import path

from annotation import views, views_exports, views_progress

app_name = "annotation"
urlpatterns = [
    path("", views.study_list, name="study-list"),
    path("new/", views.study_new, name="study-new"),
    path("<int:study_id>/", views.study_detail, name="study-detail"),
    path("<int:study_id>/import/", views.study_import_upload, name="study-import"),
    # The researcher's annotation page: progress, quality, attention checks, settings, invite link.
    path("<int:study_id>/annotation/", views_progress.study_annotation, name="study-annotation"),
    path(
        "<int:study_id>/annotation/settings/",
        views_progress.study_annotation_settings,
        name="study-annotation-settings",
    ),
    path("<int:study_id>/annotation/checks/", views_progress.study_check_mark, name="study-check-mark"),
    path(
        "<int:study_id>/annotation/checks/distractors/",
        views_progress.study_check_distractors,
        name="study-check-distractors",
    ),
    path(
        "<int:study_id>/annotation/invite/rotate/",
        views_progress.study_invite_rotate,
        name="study-invite-rotate",
    ),
    path(
        "<int:study_id>/annotation/annotators/<int:annotator_id>/inclusion/",
        views_progress.study_annotator_inclusion,
        name="study-annotator-inclusion",
    ),
    path(
        "<int:study_id>/annotation/annotators/<int:annotator_id>/unblock/",
        views_progress.study_annotator_unblock,
        name="study-annotator-unblock",
    ),
    # /studies/<id>/export/ratings.csv, references.jsonl, diversity.csv, ... (owners only)
    path("<int:study_id>/export/<slug:what>.<slug:fmt>", views_exports.study_export, name="study-export"),
]
