"""Stored automatic scores and the runs that compute them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models import DialogContext, Response, Study, System
from scoring.metrics.signature import signature_implementation
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, WHITESPACE_TOKENIZER
from scoring.trainers import model_kind_choices


class MetricOrigin(models.TextChoices):
    BUILTIN = "builtin", "built in"
    PLUGIN = "plugin", "plugin (entry point group dialeval.metrics)"
    EXTERNAL = "external", "external: scores computed elsewhere and imported"


class MetricSignature(models.Model):
    """Everything that makes a score reproducible (sacrebleu style): name, parameters, artifact, version.

    ``text`` is the canonical string, e.g. ``bleu-2|refs:multi|tok:en-13a|smooth:method1|version:0.1.0``.
    ``origin`` says where the scores come from: a built-in metric, a plugin metric (its signature names the
    plugin and its version), or an import of scores computed elsewhere.
    """

    text = models.CharField(max_length=500, unique=True)
    origin = models.CharField(
        max_length=10, choices=MetricOrigin.choices, default=MetricOrigin.BUILTIN, db_index=True
    )
    name = models.CharField(max_length=120, db_index=True)
    parameters = models.JSONField(default=dict)
    artifact_hash = models.CharField(max_length=64, blank=True)
    version = models.CharField(max_length=40)

    class Meta:
        ordering = ["name", "text"]

    def __str__(self) -> str:
        return self.text

    @property
    def references_mode(self) -> str:
        return str(self.parameters.get("refs", "single"))

    @property
    def implementation(self) -> str:
        """The tool that computed its scores (nltk, nlg-eval, sacrebleu, rouge-score; dialeval, external,
        plugin:...), as every report, CSV and API row names it."""
        return signature_implementation(self.parameters or {}, str(self.origin))


class MetricScore(models.Model):
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="metric_scores")
    signature = models.ForeignKey(MetricSignature, on_delete=models.PROTECT, related_name="scores")
    value = models.FloatField()
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["response", "signature"], name="score_unique_per_response_signature"
            )
        ]

    def __str__(self) -> str:
        return f"{self.signature_id}: {self.value} for response {self.response_id}"


class SystemMetricScore(models.Model):
    """A system-level score (Distinct-n, Self-BLEU, Gupta et al. (2019)'s recall, corpus BLEU): one per system."""

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="metric_scores")
    signature = models.ForeignKey(MetricSignature, on_delete=models.PROTECT, related_name="system_scores")
    value = models.FloatField()
    items = models.PositiveIntegerField(help_text="contexts (or outputs) the value is computed from")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["system", "signature"], name="score_unique_per_system_signature")
        ]

    def __str__(self) -> str:
        return f"{self.signature_id}: {self.value} for system {self.system_id}"


class RunStatus(models.TextChoices):
    PENDING = "pending", "waiting for a worker"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "finished"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


ACTIVE_RUN_STATUSES = (RunStatus.PENDING, RunStatus.RUNNING)


class ChunkStatus(models.TextChoices):
    PENDING = "pending", "waiting for a worker"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


class ChunkKind(models.TextChoices):
    REPLIES = "replies", "one metric family over a slice of the study's replies"
    SYSTEMS = "systems", "system-level metrics over every system"
    WHOLE_SET = "whole-set", "whole-set metrics (blends) from the stored raw scores"
    PER_REFERENCE = (
        "per-reference",
        "a multi-reference metric against each reference of a slice of replies, for the references curve",
    )
    DIVERSITY = "diversity", "diversity metrics per (system, context), for the diversity table"
    PAIRWISE = "pairwise", "a pairwise judge over pairs of replies to one context"


class RunPurpose(models.TextChoices):
    SCORES = "scores", "the metric scores a researcher asked for"
    REPORT = "report", "per-reference and per-(system, context) values a correlation report reads"


class ReferencesMode(models.TextChoices):
    SINGLE = "single", "single reference (the original reply)"
    MULTI = "multi", "every reference of the context (best-matching reference, Gupta et al. (2019) eq. 1)"


class TokenizerChoice(models.TextChoices):
    """How the metrics that tokenize split text (``tok:`` in their signatures); see scoring.metrics.tokenize."""

    DEFAULT = DEFAULT_TOKENIZER, "the study language's tokenizer (en-v1, zh-jieba)"
    NONE = WHITESPACE_TOKENIZER, "none: whitespace split as it comes, for pre-tokenized text"


# A model's kind is one of the trainer registry's (scoring.trainers.model_kind_choices, a callable: Django
# choices are no database constraint, and a migration records the callable, not the list, so a new kind
# needs no migration).


class TrainedModel(models.Model):
    """A trained learned-metric artifact (a folder on disk) that scoring runs can use.

    ``content_hash`` is the artifact's own hash (``hash.txt``), recorded in the signature of every score
    computed with it; the worker checks the folder still hashes to it before scoring. At most one model
    per kind is the default, used by studies that select none.
    """

    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=model_kind_choices)
    path = models.CharField(max_length=500, help_text="the artifact folder")
    content_hash = models.CharField(max_length=64)
    language = models.CharField(max_length=10, default="en")
    corpus = models.CharField(max_length=500, blank=True, help_text="what it was trained on")
    config = models.JSONField(default=dict)
    curve = models.JSONField(default=dict, help_text="validation curve, per epoch (and per cell)")
    is_default = models.BooleanField(default=False)
    pairs = models.PositiveIntegerField(null=True, blank=True, help_text="training pairs (context, reply)")
    epochs = models.PositiveIntegerField(null=True, blank=True, help_text="epochs trained")
    validation_accuracy = models.FloatField(
        null=True, blank=True, help_text="best validation ranking accuracy (positive above negative)"
    )
    size_bytes = models.BigIntegerField(null=True, blank=True, help_text="the artifact folder's size")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind"], condition=models.Q(is_default=True), name="one_default_model_per_kind"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind}, {self.content_hash[:12]})"


class TrainingStatus(models.TextChoices):
    PENDING = "pending", "waiting for a worker"
    RUNNING = "running", "training"
    SUCCEEDED = "succeeded", "trained"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


ACTIVE_TRAINING_STATUSES = (TrainingStatus.PENDING, TrainingStatus.RUNNING)


class TrainingJob(models.Model):
    """Training a learned metric (RUBER, BERT-RUBER, MaUde) as a Celery job started from the page or the API.

    ``progress`` is the latest report of the trainer ({"stage", "epoch", "epochs", "loss",
    "validation_accuracy", "cell", ...}); ``curve`` the list of per-epoch points the page plots. A cancel
    request sets ``cancel_requested``; the trainer stops at its next progress report. The finished model is
    ``trained_model``. Scoring runs that need the model wait for the job (``ScoringRun.waiting_for``).
    """

    name = models.SlugField(max_length=100, help_text="the name the trained model will have")
    kind = models.CharField(max_length=20, choices=model_kind_choices)
    study = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="training_jobs",
        help_text="the study it was started from (its model choice is set when it succeeds)",
    )
    corpus = models.CharField(max_length=500, help_text="what it trains on: a server path or an upload")
    corpus_path = models.CharField(max_length=500, help_text="the corpus file or folder on the server")
    corpus_format = models.CharField(max_length=20, default="dailydialog")
    parameters = models.JSONField(default=dict, help_text="epochs, cells, pairs limit, seed, threads...")
    make_default = models.BooleanField(default=False)
    status = models.CharField(
        max_length=10, choices=TrainingStatus.choices, default=TrainingStatus.PENDING, db_index=True
    )
    progress = models.JSONField(default=dict)
    curve = models.JSONField(default=list)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    trained_model = models.ForeignKey(
        TrainedModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="training_jobs"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["name"],
                condition=models.Q(status__in=["pending", "running"]),
                name="one_active_training_per_name",
            )
        ]

    def __str__(self) -> str:
        return f"training {self.name} ({self.kind}, {self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in {TrainingStatus.SUCCEEDED, TrainingStatus.FAILED, TrainingStatus.CANCELLED}


class StudyModelChoice(models.Model):
    """The trained model of one kind that a study's learned metrics use (instead of the default)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="model_choices")
    kind = models.CharField(max_length=20, choices=model_kind_choices)
    trained_model = models.ForeignKey(TrainedModel, on_delete=models.PROTECT, related_name="study_choices")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "kind"], name="one_model_choice_per_kind")]

    def __str__(self) -> str:
        return f"{self.study}: {self.trained_model}"


class ScoringRun(models.Model):
    """A request to score a study; the work itself is split into :class:`ScoringChunk` rows.

    ``request_key`` identifies what was asked (study, metrics, references mode, tokenizer, model hashes):
    at most one pending or running run per key (a partial unique constraint), so the same run started twice
    at once is one run. ``progress_done`` / ``progress_total`` count scores (reply x metric, system x
    metric) of finished chunks; running chunks add their own ``units_done``.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="scoring_runs")
    purpose = models.CharField(
        max_length=10,
        choices=RunPurpose.choices,
        default=RunPurpose.SCORES,
        help_text="a report's runs (scoring.services.report_scores) are not listed with the researcher's",
    )
    request_key = models.CharField(max_length=64, null=True, blank=True, db_index=True)
    recompute = models.BooleanField(
        default=False, help_text="score every reply again, not only those without a score of the signature"
    )
    metrics = models.JSONField(default=list, help_text="metric names, as in `manage.py list_metrics`")
    references = models.CharField(max_length=10, choices=ReferencesMode.choices, default=ReferencesMode.MULTI)
    tokenizer = models.CharField(
        max_length=20,
        choices=TokenizerChoice.choices,
        default=TokenizerChoice.DEFAULT,
        help_text="how the metrics that tokenize split text (learned metrics use their model's tokenizer)",
    )
    implementation = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="the tools that compute the baselines: '' each metric's default (nltk), one name "
        "(nlg-eval, sacrebleu, rouge-score) or per family (bleu=sacrebleu,meteor=nlg-eval)",
    )
    implementations = models.JSONField(
        default=dict, blank=True, help_text="the implementation each metric was computed with: {metric: name}"
    )
    options = models.JSONField(
        default=dict,
        blank=True,
        help_text="parameters of the chosen implementations, e.g. {tok: intl, smooth: floor, stem: yes, oov: mean}",
    )
    vectors = models.CharField(
        max_length=100,
        blank=True,
        default="",
        help_text="the registered word vectors the embedding metrics use ('' : GloVe 6B 50d)",
    )
    status = models.CharField(
        max_length=10, choices=RunStatus.choices, default=RunStatus.PENDING, db_index=True
    )
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text="why a failed run failed")
    notes = models.TextField(blank=True, help_text="warnings of a run that finished, e.g. skipped responses")
    timings = models.JSONField(default=dict, help_text="seconds spent per metric")
    trained_models = models.JSONField(
        default=dict, help_text="the trained models used, by kind: {kind: {id, name, hash, path}}"
    )
    signatures = models.JSONField(default=dict, help_text="the signature id of each metric: {name: id}")
    failures = models.JSONField(
        default=list, help_text="scores that could not be computed: [{metric, response_id, error}]"
    )
    attempts = models.PositiveSmallIntegerField(default=0, help_text="times the run was planned")
    waiting_for = models.ForeignKey(
        TrainingJob,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="waiting_runs",
        help_text="a model this run needs is still training: the run starts when the job succeeds",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    enqueued_at = models.DateTimeField(null=True, blank=True, help_text="last time a task message was sent")
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # Not stored: set by scoring_run_create when it returned a run that was already pending or running.
    was_existing: bool = False

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["request_key"],
                condition=models.Q(status__in=["pending", "running"]),
                name="one_active_run_per_request",
            )
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.study} ({self.status})"

    @property
    def progress_percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == RunStatus.SUCCEEDED else 0
        return int(100 * self.progress_done / self.progress_total)

    @property
    def is_finished(self) -> bool:
        return self.status in {RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED}


class ScoringChunk(models.Model):
    """One unit of a run's work: a metric family over up to ``DIALEVAL_SCORING_CHUNK_SIZE`` replies, the
    system-level metrics, or the whole-set blends. Claimed, heartbeated and finished like a run used to be:
    conditional updates fenced by ``attempts``, so a chunk is computed and stored by one worker at a time and
    a lost chunk is the only work redone.
    """

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    stage = models.PositiveSmallIntegerField(
        default=0, help_text="1: waits until every stage-0 chunk is done"
    )
    kind = models.CharField(max_length=20, choices=ChunkKind.choices, default=ChunkKind.REPLIES)
    queue = models.CharField(max_length=20, default="cpu", help_text="the Celery queue that computes it")
    metrics = models.JSONField(default=list)
    response_ids = models.JSONField(
        default=list, help_text="the replies of a 'replies' or 'per-reference' chunk"
    )
    signature = models.ForeignKey(
        "MetricSignature",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="the multi-reference signature a 'per-reference' chunk recomputes against each reference",
    )
    pairs = models.JSONField(
        default=list,
        blank=True,
        help_text="the [system id, context id] pairs of a 'diversity' chunk, the [response_a id, response_b id] "
        "pairs of a 'pairwise' chunk",
    )
    units = models.PositiveIntegerField(default=0, help_text="scores it computes (replies x metrics)")
    units_done = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=ChunkStatus.choices, default=ChunkStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    seconds = models.JSONField(default=dict, help_text="compute seconds per metric")
    undefined = models.JSONField(default=dict, help_text="items without a value, per metric")
    failures = models.JSONField(default=list, help_text="[{metric, response_id, error}]")
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="chunk_unique_per_run_index")]
        indexes = [models.Index(fields=["run", "status"], name="chunk_run_status")]

    def __str__(self) -> str:
        return f"chunk {self.index} of run {self.run_id} ({self.kind}, {self.status})"


class PerReferenceScore(models.Model):
    """A multi-reference signature's metric for one reply against each reference of its context, kept so that
    the correlation report's number-of-references curve (Gupta et al. (2019) Figure 2) recomputes only the replies
    whose references changed, not every reply at every new rating (scoring/reference_scores.py).

    ``references_key`` identifies the references the values were computed against (their ids and texts).
    """

    signature = models.ForeignKey(
        MetricSignature, on_delete=models.CASCADE, related_name="per_reference_scores"
    )
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="per_reference_scores")
    references_key = models.CharField(max_length=64)
    values = models.JSONField(
        default=list, help_text="one value (or null) per reference, in reference id order"
    )
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["signature", "response"], name="per_reference_score_unique")
        ]

    def __str__(self) -> str:
        return f"{self.signature_id} per reference for response {self.response_id}"


class ContextSystemScore(models.Model):
    """A diversity metric (Distinct-n, Self-BLEU, recall-BLEU) of one system's replies to one context, for the
    correlation report's diversity table (Gupta et al. (2019) section 5.2, Table 5), written by a scoring run's
    'diversity' chunks (scoring/diversity_scores.py).

    ``inputs_key`` identifies the replies and references the value was computed from, so a new rating
    recomputes nothing and a new reply only its (system, context). ``value`` is null where the metric has
    no value (too few outputs, ...), so that it is not computed again.
    """

    signature = models.ForeignKey(MetricSignature, on_delete=models.CASCADE, related_name="context_scores")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="context_metric_scores")
    context = models.ForeignKey(DialogContext, on_delete=models.CASCADE, related_name="system_metric_scores")
    inputs_key = models.CharField(max_length=64)
    value = models.FloatField(null=True, blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["signature", "system", "context"], name="context_score_unique_per_signature"
            )
        ]

    def __str__(self) -> str:
        return f"{self.signature_id}: {self.value} for system {self.system_id} on context {self.context_id}"


class VectorsFormat(models.TextChoices):
    """The files a researcher's word vectors come in (scoring.metrics.vector_files)."""

    WORD2VEC_BINARY = "word2vec-binary", "word2vec binary (e.g. GoogleNews-vectors-negative300.bin)"
    WORD2VEC_TEXT = "word2vec-text", "word2vec text (a '<words> <dimension>' header line)"
    GLOVE_TEXT = "glove-text", "GloVe text (no header line, e.g. glove.840B.300d.txt)"


class VectorsStatus(models.TextChoices):
    PENDING = "pending", "waiting for a worker"
    CONVERTING = "converting", "converting"
    READY = "ready", "ready"
    FAILED = "failed", "failed"


class WordVectorsFile(models.Model):
    """Word vectors a researcher registered once (a file on the server, or an upload) for the embedding metrics.

    The file is converted into a store folder (``store_path``: ``<DIALEVAL_VECTORS_DIR>/<content_hash>/``)
    named by the sha256 of the file's bytes; ``content_hash`` goes into the signature of every score computed
    with them. Two names for the same bytes share one store. ``progress`` is the conversion's latest report
    ({"done_bytes", "total_bytes", "note", "attempts"}); ``attempts`` and ``heartbeat_at`` are the
    conversion's lease (kernel/lease.py). Scoring runs choose them by ``name`` (docs/word-vectors.md).
    """

    name = models.SlugField(max_length=100, unique=True)
    format = models.CharField(max_length=20, choices=VectorsFormat.choices)
    source = models.CharField(
        max_length=500, help_text='what was given: "path: ..." or "upload: <file name>"'
    )
    source_path = models.CharField(
        max_length=1000, help_text="the file converted (an upload is removed once converted)"
    )
    store_path = models.CharField(max_length=1000, blank=True, help_text="the store folder, once converted")
    content_hash = models.CharField(max_length=64, blank=True, db_index=True, help_text="sha256 of the file")
    dimension = models.PositiveIntegerField(null=True, blank=True)
    words = models.PositiveIntegerField(null=True, blank=True)
    size_bytes = models.BigIntegerField(null=True, blank=True, help_text="the file's size")
    language = models.CharField(max_length=10, default="en")
    status = models.CharField(
        max_length=12, choices=VectorsStatus.choices, default=VectorsStatus.PENDING, db_index=True
    )
    progress = models.JSONField(default=dict)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="conversions started: the lease's fencing token (also shown in progress)"
    )
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="the converter's last progress")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"word vectors {self.name} ({self.status}, {self.content_hash[:12] or 'no hash yet'})"

    @property
    def is_finished(self) -> bool:
        return self.status in {VectorsStatus.READY, VectorsStatus.FAILED}


# The LLM judges' tables, in a module of their own.
from scoring.judge_models import JudgeAnswer as JudgeAnswer  # noqa: E402
from scoring.judge_models import JudgePairVerdict as JudgePairVerdict  # noqa: E402
from scoring.judge_models import JudgePreview as JudgePreview  # noqa: E402
from scoring.judge_models import JudgeRecord as JudgeRecord  # noqa: E402
from scoring.judge_models import JudgeTemplate as JudgeTemplate  # noqa: E402
from scoring.judge_models import PreviewStatus as PreviewStatus  # noqa: E402
