from django.urls import path

from annotation.exports import views as exports_views
from annotation.items import views as items_views
from annotation.progress import qualification_views
from annotation.progress import views as progress_views
from annotation.studies import views as studies_views
from annotation.study_data import views as study_data_views
from kernel import url_converters  # noqa: F401  (registers <id:...>)

app_name = "annotation"
urlpatterns = [
    path("", studies_views.study_list, name="study-list"),
    path("new/", studies_views.study_new, name="study-new"),
    path("<id:study_id>/", studies_views.study_detail, name="study-detail"),
    path("<id:study_id>/import/", study_data_views.study_import_upload, name="study-import"),
    # The data round trip (annotation/study_data/views.py): contexts to run systems on, an import a worker runs,
    # deleting a system, undoing an import.
    path(
        "<id:study_id>/contexts.<slug:fmt>", study_data_views.study_contexts_download, name="study-contexts"
    ),
    path(
        "<id:study_id>/import/jobs/<id:job_id>/", study_data_views.study_import_job, name="study-import-job"
    ),
    path(
        "<id:study_id>/import/jobs/<id:job_id>/status.json",
        study_data_views.study_import_job_status,
        name="study-import-job-status",
    ),
    path(
        "<id:study_id>/imports/<id:import_id>/undo/",
        study_data_views.study_import_undo,
        name="study-import-undo",
    ),
    path(
        "<id:study_id>/systems/<id:system_id>/delete/",
        study_data_views.study_system_delete,
        name="study-system-delete",
    ),
    # The researcher's annotation page: progress, quality, attention checks, settings, invite link.
    path("<id:study_id>/annotation/", progress_views.study_annotation, name="study-annotation"),
    path(
        "<id:study_id>/annotation/settings/",
        progress_views.study_annotation_settings,
        name="study-annotation-settings",
    ),
    path("<id:study_id>/annotation/checks/", progress_views.study_check_mark, name="study-check-mark"),
    path(
        "<id:study_id>/annotation/checks/distractors/",
        progress_views.study_check_distractors,
        name="study-check-distractors",
    ),
    path(
        "<id:study_id>/annotation/invite/rotate/",
        progress_views.study_invite_rotate,
        name="study-invite-rotate",
    ),
    path(
        "<id:study_id>/annotation/annotators/<id:annotator_id>/inclusion/",
        progress_views.study_annotator_inclusion,
        name="study-annotator-inclusion",
    ),
    path(
        "<id:study_id>/annotation/annotators/<id:annotator_id>/unblock/",
        progress_views.study_annotator_unblock,
        name="study-annotator-unblock",
    ),
    # The researcher's item browser and adjudication (annotation/items/views.py).
    path("<id:study_id>/items/", items_views.study_items, name="study-items"),
    path("<id:study_id>/items/<id:response_id>/", items_views.study_item, name="study-item"),
    path(
        "<id:study_id>/items/<id:response_id>/adjudicate/",
        items_views.study_item_adjudicate,
        name="study-item-adjudicate",
    ),
    path(
        "<id:study_id>/items/<id:response_id>/exclude/",
        items_views.study_item_exclude,
        name="study-item-exclude",
    ),
    path("<id:study_id>/items/<id:response_id>/undo/", items_views.study_item_undo, name="study-item-undo"),
    # The qualification round: training items, sending a volunteer through it again
    # (annotation/progress/qualification_views.py).
    path(
        "<id:study_id>/annotation/training/",
        qualification_views.study_training_add,
        name="study-training-add",
    ),
    path(
        "<id:study_id>/annotation/training/<id:item_id>/delete/",
        qualification_views.study_training_delete,
        name="study-training-delete",
    ),
    path(
        "<id:study_id>/annotation/annotators/<id:annotator_id>/requalify/",
        qualification_views.study_annotator_requalify,
        name="study-annotator-requalify",
    ),
    # /studies/<id>/export/ratings.csv, references.jsonl, diversity.csv, ... (owners only)
    path("<id:study_id>/export/<slug:what>.<slug:fmt>", exports_views.study_export, name="study-export"),
]
