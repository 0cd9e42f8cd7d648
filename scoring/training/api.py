"""REST API for training jobs: start a training, follow its progress and curve, cancel it; and the
trained models learned metrics can use.

A researcher sees the jobs they started and those of their studies (404 for anyone else's, as for studies).
The corpus is a path on the server (inside ``DIALEVAL_CORPUS_ROOTS``) or a file uploaded with the request
(multipart, ``corpus_file``).
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.selectors.studies import studies_visible_to
from kernel.http.api_formats import SafeJSONParser
from kernel.http.api_input import StrictInputSerializer
from kernel.permissions import IsResearcher, authenticated_user
from scoring.metrics.bert_ruber.cells import FAST_CELLS
from scoring.metrics.maude.variants import DEFAULT_VARIANTS
from scoring.models import TrainedModel, TrainingJob
from scoring.selectors import (
    trained_model_figures,
    trained_models_all,
    training_job_progress_text,
    training_jobs_visible_to,
)
from scoring.services.training_jobs import (
    FORMAT_CHOICES,
    MAX_EPOCHS,
    TrainingJobError,
    training_job_cancel,
    training_job_create,
)
from scoring.trainers import model_kind_choices
from scoring.training.model_figures import ModelFigures


class TrainedModelSerializer(serializers.ModelSerializer):
    """A model with the figures the model list shows; figures a model registered before they were stored
    lacks are read from its artifact (config, curve, folder)."""

    pairs = serializers.SerializerMethodField(help_text="training (query, reply) pairs; null for MaUde")
    dialogs = serializers.SerializerMethodField(help_text="MaUde's training dialogs; null for the others")
    epochs = serializers.SerializerMethodField(help_text="epochs the scoring cell ran")
    kept_epoch = serializers.SerializerMethodField(help_text="the epoch whose weights were kept")
    scoring_cell = serializers.SerializerMethodField(
        help_text="the cell (variant) the kind's metric scores with, whose figures these are ('' for RUBER)"
    )
    cells = serializers.SerializerMethodField(help_text="BERT-RUBER cells / MaUde variants trained")
    validation_accuracy = serializers.SerializerMethodField(
        help_text="the scoring cell's validation ranking accuracy at the kept epoch"
    )
    near_chance = serializers.SerializerMethodField(
        help_text="validation accuracy within 0.05 of chance (0.5)"
    )
    size_bytes = serializers.SerializerMethodField(help_text="the artifact folder's size")

    class Meta:
        model = TrainedModel
        fields = [
            "name", "kind", "content_hash", "language", "corpus", "is_default", "pairs", "dialogs", "epochs",
            "kept_epoch", "scoring_cell", "cells", "validation_accuracy", "near_chance", "size_bytes", "curve",
            "created_at",
        ]  # fmt: skip

    def _figures(self, model: TrainedModel) -> ModelFigures:
        cache = self.context.setdefault("figures", {})
        if model.pk not in cache:
            cache[model.pk] = trained_model_figures(model=model)
        return cache[model.pk]

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_pairs(self, model: TrainedModel) -> int | None:
        return self._figures(model).pairs

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_dialogs(self, model: TrainedModel) -> int | None:
        return self._figures(model).dialogs

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_epochs(self, model: TrainedModel) -> int | None:
        return self._figures(model).epochs

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_kept_epoch(self, model: TrainedModel) -> int | None:
        return self._figures(model).kept_epoch

    @extend_schema_field(serializers.CharField())
    def get_scoring_cell(self, model: TrainedModel) -> str:
        return self._figures(model).scoring_cell

    @extend_schema_field(serializers.BooleanField())
    def get_near_chance(self, model: TrainedModel) -> bool:
        return self._figures(model).near_chance

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_cells(self, model: TrainedModel) -> list[str]:
        return list(self._figures(model).cells)

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_validation_accuracy(self, model: TrainedModel) -> float | None:
        return self._figures(model).validation_accuracy

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_size_bytes(self, model: TrainedModel) -> int | None:
        return self._figures(model).size_bytes


class TrainingJobSerializer(serializers.ModelSerializer):
    status_text = serializers.SerializerMethodField(
        help_text='where it stands, in words: "epoch 3/10", "training word2vec", "waiting for a worker"'
    )
    progress = serializers.JSONField(
        read_only=True,
        help_text="the trainer's latest report: stage, epoch, epochs, step, steps, loss, validation_accuracy, "
        "validation_loss, cell, cell_index, cells (pending: note)",
    )
    curve = serializers.JSONField(
        read_only=True,
        help_text="one point per epoch (per cell): cell, epoch, loss, validation_accuracy, validation_loss",
    )
    trained_model = serializers.SerializerMethodField(help_text="the model it registered, once trained")

    class Meta:
        model = TrainingJob
        fields = [
            "id", "name", "kind", "study", "corpus", "corpus_format", "parameters", "make_default", "status",
            "status_text", "progress", "curve", "error", "cancel_requested", "attempts", "trained_model",
            "created_at", "started_at", "heartbeat_at", "finished_at",
        ]  # fmt: skip

    def get_status_text(self, job: TrainingJob) -> str:
        return training_job_progress_text(job=job)

    @extend_schema_field(TrainedModelSerializer(allow_null=True))
    def get_trained_model(self, job: TrainingJob) -> dict[str, Any] | None:
        return None if job.trained_model is None else TrainedModelSerializer(job.trained_model).data


class TrainingJobCreateSerializer(StrictInputSerializer):
    kind = serializers.ChoiceField(choices=model_kind_choices())
    name = serializers.CharField(max_length=80, help_text="the model's name: letters, digits, - and _")
    corpus_path = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="a corpus file or folder on the server"
    )
    corpus_file = serializers.FileField(required=False, help_text="or a corpus file uploaded (multipart)")
    corpus_format = serializers.ChoiceField(
        choices=FORMAT_CHOICES,
        help_text='"dailydialog" (turns separated by __eou__) or "generic": {"query", "reply"} JSON lines '
        '(MaUde, Cross-RUBER: {"turns": [...]})',
    )
    epochs = serializers.IntegerField(required=False, min_value=1, max_value=MAX_EPOCHS)
    max_pairs = serializers.IntegerField(required=False, min_value=2)
    cells = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text=f"BERT-RUBER only; default the cells that train in minutes: {', '.join(FAST_CELLS)}",
    )
    variants = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text=f"MaUde only; default {', '.join(DEFAULT_VARIANTS)}",
    )
    threads = serializers.IntegerField(
        required=False, min_value=1, help_text="torch threads (default: the worker's share)"
    )
    make_default = serializers.BooleanField(default=False)
    study = serializers.IntegerField(
        required=False, help_text="a study of yours: the model becomes its choice when trained"
    )


class TrainingJobListApi(APIView):
    permission_classes = [IsResearcher]
    # The API's JSON parser (kernel/http/api_formats.py), as by default: bounded depth, no NUL or lone surrogate.
    parser_classes = [SafeJSONParser, MultiPartParser, FormParser]

    @extend_schema(responses=TrainingJobSerializer(many=True))
    def get(self, request: Request) -> ApiResponse:
        jobs = training_jobs_visible_to(user=authenticated_user(request))[:100]
        return ApiResponse(TrainingJobSerializer(jobs, many=True).data)

    @extend_schema(
        request=TrainingJobCreateSerializer,
        responses={202: TrainingJobSerializer},
        description="Checks the request (a free name, the corpus readable in its format, the parameters), "
        "then queues the job (202). A 400 names the field that is wrong.",
    )
    def post(self, request: Request) -> ApiResponse:
        serializer = TrainingJobCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        user = authenticated_user(request)
        study = None
        if data.get("study") is not None:
            study = get_object_or_404(studies_visible_to(user=user), pk=data["study"])
        parameters = {
            key: data[key] for key in ("epochs", "max_pairs", "cells", "variants", "threads") if key in data
        }
        try:
            job = training_job_create(
                user=user,
                kind=data["kind"],
                name=data["name"],
                corpus_format=data["corpus_format"],
                corpus_path=data.get("corpus_path", ""),
                upload=data.get("corpus_file"),
                parameters=parameters,
                make_default=data["make_default"],
                study=study,
            )
        except TrainingJobError as error:
            field = "corpus_path" if error.field == "corpus" else error.field
            return ApiResponse({field: [error.message]}, status=status.HTTP_400_BAD_REQUEST)
        return ApiResponse(TrainingJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _visible_job(request: Request, job_id: int) -> TrainingJob:
    return get_object_or_404(training_jobs_visible_to(user=authenticated_user(request)), pk=job_id)


class TrainingJobDetailApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=TrainingJobSerializer)
    def get(self, request: Request, job_id: int) -> ApiResponse:
        return ApiResponse(TrainingJobSerializer(_visible_job(request, job_id)).data)


class TrainingJobCancelApi(APIView):
    """Cancel a training job: a pending one at once, a running one at its next progress report (about a
    second; nothing is saved). 409 when the job had already ended."""

    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses={200: TrainingJobSerializer, 409: TrainingJobSerializer})
    def post(self, request: Request, job_id: int) -> ApiResponse:
        job = _visible_job(request, job_id)
        cancelled = training_job_cancel(job=job, user=authenticated_user(request))
        code = status.HTTP_200_OK if cancelled else status.HTTP_409_CONFLICT
        return ApiResponse(TrainingJobSerializer(job).data, status=code)


class TrainedModelListApi(APIView):
    """The trained models learned metrics can use (shared by all researchers; they hold no study data)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=TrainedModelSerializer(many=True))
    def get(self, request: Request) -> ApiResponse:
        return ApiResponse(TrainedModelSerializer(trained_models_all(), many=True).data)
