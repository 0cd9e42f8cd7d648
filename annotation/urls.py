from django.urls import path

from annotation import (
    views,
    views_data,
    views_exports,
    views_items,
    views_progress,
    views_qualification,
)
from kernel import url_converters  # noqa: F401  (registers <id:...>)

app_name = "annotation"
urlpatterns = [
    path("", views.study_list, name="study-list"),
    path("new/", views.study_new, name="study-new"),
    path("<id:study_id>/", views.study_detail, name="study-detail"),
    path("<id:study_id>/import/", views.study_import_upload, name="study-import"),
    # The data round trip (annotation/views_data.py): contexts to run systems on, an import a worker runs,
    # deleting a system, undoing an import.
    path("<id:study_id>/contexts.<slug:fmt>", views_data.study_contexts_download, name="study-contexts"),
    path("<id:study_id>/import/jobs/<id:job_id>/", views_data.study_import_job, name="study-import-job"),
    path(
        "<id:study_id>/import/jobs/<id:job_id>/status.json",
        views_data.study_import_job_status,
        name="study-import-job-status",
    ),
    path(
        "<id:study_id>/imports/<id:import_id>/undo/", views_data.study_import_undo, name="study-import-undo"
    ),
    path(
        "<id:study_id>/systems/<id:system_id>/delete/",
        views_data.study_system_delete,
        name="study-system-delete",
    ),
    # The researcher's annotation page: progress, quality, attention checks, settings, invite link.
    path("<id:study_id>/annotation/", views_progress.study_annotation, name="study-annotation"),
    path(
        "<id:study_id>/annotation/settings/",
        views_progress.study_annotation_settings,
        name="study-annotation-settings",
    ),
    path("<id:study_id>/annotation/checks/", views_progress.study_check_mark, name="study-check-mark"),
    path(
        "<id:study_id>/annotation/checks/distractors/",
        views_progress.study_check_distractors,
        name="study-check-distractors",
    ),
    path(
        "<id:study_id>/annotation/invite/rotate/",
        views_progress.study_invite_rotate,
        name="study-invite-rotate",
    ),
    path(
        "<id:study_id>/annotation/annotators/<id:annotator_id>/inclusion/",
        views_progress.study_annotator_inclusion,
        name="study-annotator-inclusion",
    ),
    path(
        "<id:study_id>/annotation/annotators/<id:annotator_id>/unblock/",
        views_progress.study_annotator_unblock,
        name="study-annotator-unblock",
    ),
    # The researcher's item browser and adjudication (annotation/views_items.py).
    path("<id:study_id>/items/", views_items.study_items, name="study-items"),
    path("<id:study_id>/items/<id:response_id>/", views_items.study_item, name="study-item"),
    path(
        "<id:study_id>/items/<id:response_id>/adjudicate/",
        views_items.study_item_adjudicate,
        name="study-item-adjudicate",
    ),
    path(
        "<id:study_id>/items/<id:response_id>/exclude/",
        views_items.study_item_exclude,
        name="study-item-exclude",
    ),
    path("<id:study_id>/items/<id:response_id>/undo/", views_items.study_item_undo, name="study-item-undo"),
    # The qualification round: training items, sending a volunteer through it again (views_qualification.py).
    path(
        "<id:study_id>/annotation/training/",
        views_qualification.study_training_add,
        name="study-training-add",
    ),
    path(
        "<id:study_id>/annotation/training/<id:item_id>/delete/",
        views_qualification.study_training_delete,
        name="study-training-delete",
    ),
    path(
        "<id:study_id>/annotation/annotators/<id:annotator_id>/requalify/",
        views_qualification.study_annotator_requalify,
        name="study-annotator-requalify",
    ),
    # /studies/<id>/export/ratings.csv, references.jsonl, diversity.csv, ... (owners only)
    path("<id:study_id>/export/<slug:what>.<slug:fmt>", views_exports.study_export, name="study-export"),
]
