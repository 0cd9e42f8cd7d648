from django.urls import path

from annotation.exports import api as exports_api
from annotation.joining import api as joining_api
from annotation.progress import api as progress_api
from annotation.studies import api as studies_api
from annotation.study_data import api as study_data_api
from annotation.work import api as work_api
from annotation.work import notes_api
from kernel import url_converters  # noqa: F401  (registers <id:...>)

urlpatterns = [
    path("studies/", studies_api.StudyListCreateApi.as_view(), name="api-study-list"),
    path("studies/<id:study_id>/", studies_api.StudyDetailApi.as_view(), name="api-study-detail"),
    # Imports: small ones in the request, large ones by a worker (annotation/study_data/api.py); undo; contexts.
    path(
        "studies/<id:study_id>/imports/",
        study_data_api.StudyImportUploadApi.as_view(),
        name="api-study-imports",
    ),
    path(
        "studies/<id:study_id>/imports/<id:import_id>/",
        study_data_api.StudyImportRecordApi.as_view(),
        name="api-study-import",
    ),
    path(
        "studies/<id:study_id>/import-jobs/<id:job_id>/",
        study_data_api.StudyImportJobApi.as_view(),
        name="api-study-import-job",
    ),
    path(
        "studies/<id:study_id>/contexts/",
        study_data_api.StudyContextsApi.as_view(),
        name="api-study-contexts",
    ),
    path(
        "studies/<id:study_id>/systems/<id:system_id>/",
        study_data_api.StudySystemApi.as_view(),
        name="api-study-system",
    ),
    # Researchers: a study's annotations and annotation progress (annotation/exports/api.py).
    path("studies/<id:study_id>/ratings/", exports_api.StudyRatingsApi.as_view(), name="api-study-ratings"),
    path(
        "studies/<id:study_id>/references/",
        exports_api.StudyReferencesApi.as_view(),
        name="api-study-references",
    ),
    path(
        "studies/<id:study_id>/diversity/",
        exports_api.StudyDiversityApi.as_view(),
        name="api-study-diversity",
    ),
    path(
        "studies/<id:study_id>/pairwise/",
        exports_api.StudyPairwiseApi.as_view(),
        name="api-study-pairwise",
    ),
    path(
        "studies/<id:study_id>/progress/", progress_api.StudyProgressApi.as_view(), name="api-study-progress"
    ),
    # Annotators: their own work (annotation/work/api.py).
    path("work/join/", joining_api.JoinApi.as_view(), name="api-work-join"),
    # Before the first item: the consent and the qualification round (annotation/joining/api.py).
    path("work/<id:study_id>/consent/", joining_api.ConsentApi.as_view(), name="api-work-consent"),
    path(
        "work/<id:study_id>/training/next/",
        joining_api.TrainingNextApi.as_view(),
        name="api-work-training-next",
    ),
    path(
        "work/<id:study_id>/training/<id:item_id>/answer/",
        joining_api.TrainingAnswerApi.as_view(),
        name="api-work-training-answer",
    ),
    path("work/<id:study_id>/next/", work_api.WorkNextApi.as_view(), name="api-work-next"),
    path("work/<id:study_id>/previous/", work_api.WorkPreviousApi.as_view(), name="api-work-previous"),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/rating/",
        work_api.RatingSubmitApi.as_view(),
        name="api-work-rating",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/reference/",
        work_api.ReferenceAddApi.as_view(),
        name="api-work-reference",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/diversity/",
        work_api.DiversitySubmitApi.as_view(),
        name="api-work-diversity",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/pairwise/",
        work_api.PairwiseSubmitApi.as_view(),
        name="api-work-pairwise",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/skip/",
        work_api.AssignmentSkipApi.as_view(),
        name="api-work-skip",
    ),
    path(
        "work/<id:study_id>/assignments/<id:assignment_id>/notes/",
        notes_api.WorkNoteApi.as_view(),
        name="api-work-notes",
    ),
]
