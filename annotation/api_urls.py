from django.urls import path

from annotation import api, api_data, api_exports, api_joining, api_notes, api_work
from kernel import url_converters  # noqa: F401  (registers <id:...>)

urlpatterns = [
    path("studies/", api.StudyListCreateApi.as_view(), name="api-study-list"),
    path("studies/<id:study_id>/", api.StudyDetailApi.as_view(), name="api-study-detail"),
    # Imports: small ones in the request, large ones by a worker (annotation/api_data.py); undo; contexts.
    path("studies/<id:study_id>/imports/", api_data.StudyImportUploadApi.as_view(), name="api-study-imports"),
    path(
        "studies/<id:study_id>/imports/<id:import_id>/",
        api_data.StudyImportRecordApi.as_view(),
        name="api-study-import",
    ),
    path(
        "studies/<id:study_id>/import-jobs/<id:job_id>/",
        api_data.StudyImportJobApi.as_view(),
        name="api-study-import-job",
    ),
    path("studies/<id:study_id>/contexts/", api_data.StudyContextsApi.as_view(), name="api-study-contexts"),
    path(
        "studies/<id:study_id>/systems/<id:system_id>/",
        api_data.StudySystemApi.as_view(),
        name="api-study-system",
    ),
    # Researchers: a study's annotations and annotation progress (annotation/api_exports.py).
    path("studies/<id:study_id>/ratings/", api_exports.StudyRatingsApi.as_view(), name="api-study-ratings"),
    path(
        "studies/<id:study_id>/references/",
        api_exports.StudyReferencesApi.as_view(),
        name="api-study-references",
    ),
    path(
        "studies/<id:study_id>/diversity/",
        api_exports.StudyDiversityApi.as_view(),
        name="api-study-diversity",
    ),
    path(
        "studies/<id:study_id>/pairwise/",
        api_exports.StudyPairwiseApi.as_view(),
        name="api-study-pairwise",
    ),
    path(
        "studies/<id:study_id>/progress/", api_exports.StudyProgressApi.as_view(), name="api-study-progress"
    ),
    # Annotators: their own work (annotation/api_work.py).
    path("work/join/", api_work.JoinApi.as_view(), name="api-work-join"),
    # Before the first item: the consent and the qualification round (annotation/api_joining.py).
    path("work/<id:study_id>/consent/", api_joining.ConsentApi.as_view(), name="api-work-consent"),
    path(
        "work/<id:study_id>/training/next/",
        api_joining.TrainingNextApi.as_view(),
        name="api-work-training-next",
    ),
    path(
        "work/<id:study_id>/training/<id:item_id>/answer/",
        api_joining.TrainingAnswerApi.as_view(),
        name="api-work-training-answer",
    ),
    path("work/<id:study_id>/next/", api_work.WorkNextApi.as_view(), name="api-work-next"),
    path("work/<id:study_id>/previous/", api_work.WorkPreviousApi.as_view(), name="api-work-previous"),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/rating/",
        api_work.RatingSubmitApi.as_view(),
        name="api-work-rating",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/reference/",
        api_work.ReferenceAddApi.as_view(),
        name="api-work-reference",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/diversity/",
        api_work.DiversitySubmitApi.as_view(),
        name="api-work-diversity",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/pairwise/",
        api_work.PairwiseSubmitApi.as_view(),
        name="api-work-pairwise",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/skip/",
        api_work.AssignmentSkipApi.as_view(),
        name="api-work-skip",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/notes/",
        api_notes.WorkNoteApi.as_view(),
        name="api-work-notes",
    ),
]
