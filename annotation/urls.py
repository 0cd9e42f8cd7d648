from django.urls import path

from annotation import (
    views,
    views_data,
    views_exports,
    views_items,
    views_progress,
    views_qualification,
)

app_name = "annotation"
urlpatterns = [
    path("", views.study_list, name="study-list"),
    path("new/", views.study_new, name="study-new"),
    path("<int:study_id>/", views.study_detail, name="study-detail"),
    path("<int:study_id>/import/", views.study_import_upload, name="study-import"),
    # The data round trip (annotation/views_data.py): contexts to run systems on, an import a worker runs,
    # deleting a system, undoing an import.
    path("<int:study_id>/contexts.<slug:fmt>", views_data.study_contexts_download, name="study-contexts"),
    path("<int:study_id>/import/jobs/<int:job_id>/", views_data.study_import_job, name="study-import-job"),
    path(
        "<int:study_id>/import/jobs/<int:job_id>/status.json",
        views_data.study_import_job_status,
        name="study-import-job-status",
    ),
    path(
        "<int:study_id>/imports/<int:import_id>/undo/", views_data.study_import_undo, name="study-import-undo"
    ),
    path(
        "<int:study_id>/systems/<int:system_id>/delete/",
        views_data.study_system_delete,
        name="study-system-delete",
    ),
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
    # The researcher's item browser and adjudication (annotation/views_items.py).
    path("<int:study_id>/items/", views_items.study_items, name="study-items"),
    path("<int:study_id>/items/<int:response_id>/", views_items.study_item, name="study-item"),
    path(
        "<int:study_id>/items/<int:response_id>/adjudicate/",
        views_items.study_item_adjudicate,
        name="study-item-adjudicate",
    ),
    path(
        "<int:study_id>/items/<int:response_id>/exclude/",
        views_items.study_item_exclude,
        name="study-item-exclude",
    ),
    path("<int:study_id>/items/<int:response_id>/undo/", views_items.study_item_undo, name="study-item-undo"),
    # The qualification round: training items, sending a volunteer through it again (views_qualification.py).
    path(
        "<int:study_id>/annotation/training/",
        views_qualification.study_training_add,
        name="study-training-add",
    ),
    path(
        "<int:study_id>/annotation/training/<int:item_id>/delete/",
        views_qualification.study_training_delete,
        name="study-training-delete",
    ),
    path(
        "<int:study_id>/annotation/annotators/<int:annotator_id>/requalify/",
        views_qualification.study_annotator_requalify,
        name="study-annotator-requalify",
    ),
    # /studies/<id>/export/ratings.csv, references.jsonl, diversity.csv, ... (owners only)
    path("<int:study_id>/export/<slug:what>.<slug:fmt>", views_exports.study_export, name="study-export"),
]
