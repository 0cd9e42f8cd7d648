"""The study data model: what is evaluated (contexts, references, systems, responses) and by whom (ratings).

A study asks one or more questions about each response, each on its own integer scale: 0-2
"bad / borderline / good" as in RUBER (Tao et al., 2018, section 4.1), 1-5 as in the multi-reference and
BERT-RUBER studies (Gupta et al. (2019) section 5.1.1; Ghazarian et al. (2019)).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation.scales import ORDINAL_MAX_POINTS


class Language(models.TextChoices):
    ENGLISH = "en", "English"
    CHINESE = "zh", "Chinese"


def new_invite_token() -> str:
    return secrets.token_urlsafe(18)


def new_order_seed() -> int:
    return secrets.randbelow(2**31)


class CollectionMode(models.TextChoices):
    """How the N references of a context are split among writers (Gupta et al., 2019, appendix A): with N = 4,
    4R1W (one writer writes all four), 2R2W (two writers write two each), 1R4W (four writers, one each)."""

    ONE_WRITER = "one", "one annotator writes all N (4R1W)"
    TWO_WRITERS = "two", "two annotators write N/2 each (2R2W)"
    EACH_WRITER = "each", "N annotators write one each (1R4W)"


class CheckAction(models.TextChoices):
    WARN = "warn", "warn the annotator and flag them"
    BLOCK = "block", "stop giving the annotator work"


class Study(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="studies")
    name = models.CharField(max_length=200, help_text="unique among the owner's studies")
    description = models.TextField(blank=True)
    language = models.CharField(max_length=2, choices=Language.choices, default=Language.ENGLISH)
    instructions = models.TextField(blank=True)
    ratings_per_item = models.PositiveSmallIntegerField(default=3, help_text="k: ratings wanted per item")
    show_reference = models.BooleanField(default=False, help_text="show a reference reply to raters")
    count_imported_ratings = models.BooleanField(
        default=True,
        help_text="ratings imported from files count toward k: a reply imported with k raters is complete "
        "and handed to nobody (off: a fresh collection of k ratings per reply in the app)",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    # Annotation tasks. Rating is on by default; reference collection when references_wanted > 0.
    rating_enabled = models.BooleanField(default=True, help_text="annotators rate replies")
    references_wanted = models.PositiveSmallIntegerField(
        default=0, help_text="N: references to collect per context (0: no collection task)"
    )
    collection_mode = models.CharField(
        max_length=4, choices=CollectionMode.choices, default=CollectionMode.ONE_WRITER
    )
    diversity_enabled = models.BooleanField(
        default=False, help_text="annotators judge the diversity of a system's several replies to a context"
    )
    invite_token = models.CharField(max_length=40, unique=True, default=new_invite_token)
    invites_open = models.BooleanField(default=True, help_text="the invite link admits new annotators")
    max_items_per_annotator = models.PositiveIntegerField(
        null=True, blank=True, help_text="cap on the items one annotator is given (empty: no cap)"
    )
    hold_seconds = models.PositiveIntegerField(
        default=1800, help_text="an item handed out but not answered within this time goes back to the pool"
    )
    # Quality control.
    check_interval = models.PositiveSmallIntegerField(
        default=10, help_text="about one item in this many is an attention check (0: none)"
    )
    check_action = models.CharField(max_length=5, choices=CheckAction.choices, default=CheckAction.WARN)
    check_failures_allowed = models.PositiveSmallIntegerField(
        default=1, help_text="failed attention checks tolerated before an annotator is flagged or blocked"
    )
    kappa_threshold = models.FloatField(
        null=True,
        blank=True,
        default=0.2,
        help_text="exclude from reports annotators whose agreement with the others is below this "
        "(Gupta et al. (2019) uses 0.2; empty: keep everyone)",
    )
    min_seconds_per_item = models.FloatField(
        default=2.0, help_text="answers faster than this are flagged as too fast"
    )
    # Joining: sign-up through the invite link, consent, crowd platforms, qualification.
    signup_open = models.BooleanField(
        default=True, help_text="the invite link lets a new volunteer create an account (no e-mail needed)"
    )
    consent_text = models.TextField(
        blank=True,
        help_text="shown when a volunteer joins; they must accept it before their first item "
        "(empty: the study's description and instructions are shown and must be accepted)",
    )
    crowd_id_parameter = models.CharField(
        max_length=40,
        blank=True,
        help_text="URL parameter of the invite link that carries a crowd worker's id "
        "(e.g. PROLIFIC_PID for Prolific, workerId for MTurk); empty: none",
    )
    completion_code = models.CharField(
        max_length=60, blank=True, help_text="shown to an annotator who has finished (crowd platforms)"
    )
    qualification_threshold = models.FloatField(
        default=0.8,
        help_text="share of the training items a volunteer must answer within the gold range to be "
        "admitted (only when the study has training items)",
    )
    pairwise_enabled = models.BooleanField(
        default=False, help_text="annotators compare two systems' replies to one context"
    )
    pairwise_prompt = models.CharField(
        max_length=300,
        default="Which reply is the better response to the conversation?",
        help_text="the question of the pairwise task",
    )
    # Bumped (after commit) by every write that can change a report: ratings, imports, metric scores,
    # references, report settings. Cached reports are keyed on it (correlation/report/cache.py).
    data_version = models.PositiveBigIntegerField(
        default=0, editable=False, help_text="changes whenever the study's report data changes"
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="study_unique_name_per_owner")]

    def __str__(self) -> str:
        return self.name


class QuestionKind(models.TextChoices):
    ORDINAL = "ordinal", "points of a scale (buttons and number keys)"
    SLIDER = "slider", "a continuous slider (e.g. 0-100)"


class Question(models.Model):
    """One thing raters judge about a response, on an integer scale [scale_min, scale_max]: a few ordinal
    points (at most ``ORDINAL_MAX_POINTS``), or a slider over a wide range."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="questions")
    name = models.SlugField(max_length=60, help_text="short identifier, e.g. appropriateness")
    prompt = models.TextField(blank=True, help_text="what the rater is asked")
    scale_min = models.SmallIntegerField(default=0)
    scale_max = models.SmallIntegerField(default=2)
    labels = models.JSONField(
        default=list,
        blank=True,
        help_text="ordinal: one label per scale point, low to high; slider: a label for each end",
    )
    kind = models.CharField(max_length=8, choices=QuestionKind.choices, default=QuestionKind.ORDINAL)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="question_unique_name_per_study"),
            models.CheckConstraint(
                condition=Q(scale_max__gt=models.F("scale_min")), name="question_scale_order"
            ),
            models.CheckConstraint(
                condition=Q(kind=QuestionKind.SLIDER) | Q(scale_max__lt=F("scale_min") + ORDINAL_MAX_POINTS),
                name="question_ordinal_points",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.scale_min}-{self.scale_max})"

    @property
    def scale_points(self) -> list[int]:
        return list(range(self.scale_min, self.scale_max + 1))

    @property
    def is_slider(self) -> bool:
        return self.kind == QuestionKind.SLIDER

    def label_for(self, value: int) -> str:
        index = value - self.scale_min
        if 0 <= index < len(self.labels):
            return str(self.labels[index])
        return str(value)


class DialogContext(models.Model):
    """Ordered dialog turns; the query is the last turn.

    ``turns`` is a list of ``{"speaker": str, "text": str}`` objects (extra keys such as DailyDialog's
    ``act`` and ``emotion`` are kept).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="contexts")
    external_id = models.CharField(max_length=200, blank=True, help_text="id in the imported source")
    turns = models.JSONField(default=list)
    position = models.PositiveIntegerField(default=0)
    source_import = models.ForeignKey(
        "StudyImport",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_contexts",
        help_text="the import that created it (empty: created in the app, or by an import before undo existed)",
    )

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "external_id"],
                condition=~Q(external_id=""),
                name="context_unique_external_id_per_study",
            )
        ]

    def __str__(self) -> str:
        return self.external_id or f"context {self.pk}"

    @property
    def query(self) -> str:
        return str(self.turns[-1]["text"]) if self.turns else ""


class ReferenceOrigin(models.TextChoices):
    ORIGINAL = "original", "original reply of the corpus"
    COLLECTED = "collected", "written by an annotator in this app"
    IMPORTED = "imported", "imported from a file"


class Reference(models.Model):
    context = models.ForeignKey(DialogContext, on_delete=models.CASCADE, related_name="references")
    text = models.TextField()
    origin = models.CharField(max_length=10, choices=ReferenceOrigin.choices)
    author = models.ForeignKey(
        "Annotator", null=True, blank=True, on_delete=models.SET_NULL, related_name="references_written"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    seconds_spent = models.FloatField(
        null=True, blank=True, help_text="collected: time spent writing it, measured by the server"
    )
    client_seconds = models.FloatField(
        null=True, blank=True, help_text="collected: the browser's own figure (kept, never trusted for flags)"
    )
    keystrokes = models.PositiveIntegerField(
        null=True, blank=True, help_text="collected: key presses the browser counted while it was typed"
    )
    flags = models.JSONField(
        default=list, blank=True, help_text="collected: e.g. pasted, too-fast (kept, shown to the researcher)"
    )
    source_import = models.ForeignKey(
        "StudyImport",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_references",
        help_text="the import that created it (empty: created in the app, or by an import before undo existed)",
    )

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.text[:60]


class System(models.Model):
    """A dialog system whose replies are evaluated; ``is_human`` marks human-written replies."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=120)
    is_human = models.BooleanField(default=False)
    source_import = models.ForeignKey(
        "StudyImport",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_systems",
        help_text="the import that created it (empty: created in the app, or by an import before undo existed)",
    )

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="system_unique_name_per_study")]

    def __str__(self) -> str:
        return self.name


class Response(models.Model):
    """A system's reply to a context. ``sample_index`` numbers several outputs of one system for one context."""

    context = models.ForeignKey(DialogContext, on_delete=models.CASCADE, related_name="responses")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="responses")
    text = models.TextField()
    sample_index = models.PositiveSmallIntegerField(default=0)
    external_id = models.CharField(max_length=200, blank=True)
    source_import = models.ForeignKey(
        "StudyImport",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_responses",
        help_text="the import that created it (empty: created in the app, or by an import before undo existed)",
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["system", "context", "sample_index"], name="response_unique_per_system_context"
            )
        ]

    def __str__(self) -> str:
        return self.text[:60]


class AnnotatorOrigin(models.TextChoices):
    VOLUNTEER = "volunteer", "volunteer in this app"
    IMPORTED = "imported", "imported with a data set"


class Annotator(models.Model):
    """A rater within one study: an app user, or a (possibly anonymous) person from imported data."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="annotators")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="annotator_roles",
    )
    pseudonym = models.CharField(max_length=120)
    origin = models.CharField(
        max_length=10, choices=AnnotatorOrigin.choices, default=AnnotatorOrigin.VOLUNTEER
    )
    created_at = models.DateTimeField(auto_now_add=True)
    order_seed = models.BigIntegerField(
        default=new_order_seed, help_text="seeds this annotator's shuffled item order (reproducible)"
    )
    blocked = models.BooleanField(default=False, help_text="given no more work (failed attention checks)")
    report_inclusion = models.CharField(
        max_length=8,
        choices=[("auto", "by the agreement threshold"), ("include", "always"), ("exclude", "never")],
        default="auto",
        help_text="whether this annotator's ratings count in reports",
    )
    identity_known = models.BooleanField(
        default=True,
        help_text="False for an anonymous imported rater (a position in a list of scores, as in GRADE's "
        "file): ratings of such raters are never compared with each other as one person's",
    )
    consented_at = models.DateTimeField(
        null=True, blank=True, help_text="when the volunteer accepted the study's consent text"
    )
    external_worker_id = models.CharField(
        max_length=120,
        blank=True,
        help_text="crowd platform worker id (Prolific, MTurk) from the invite link",
    )
    qualification = models.CharField(
        max_length=8,
        choices=[("pending", "not qualified yet"), ("passed", "passed"), ("failed", "failed")],
        default="pending",
        help_text="the qualification round (studies with training items only)",
    )
    source_import = models.ForeignKey(
        "StudyImport",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_annotators",
        help_text="the import that created it (empty: created in the app, or by an import before undo existed)",
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "pseudonym"], name="annotator_unique_pseudonym_per_study"
            ),
            models.UniqueConstraint(
                fields=["study", "user"],
                condition=Q(user__isnull=False),
                name="annotator_unique_user_per_study",
            ),
        ]

    def __str__(self) -> str:
        return self.pseudonym


class Rating(models.Model):
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="ratings")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="ratings")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="ratings")
    value = models.SmallIntegerField()
    seconds_spent = models.FloatField(null=True, blank=True, help_text="measured by the server")
    client_seconds = models.FloatField(
        null=True, blank=True, help_text="the browser's own figure (kept, never trusted for flags)"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "response", "question"],
                name="rating_unique_per_annotator_response_question",
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator} rated {self.response_id} {self.value}"


class ImportedMeanRating(models.Model):
    """A mean human rating imported without its per-annotator scores (e.g. multirefeval's MTurk means).

    Used for correlation only where a response has no individual :class:`Rating` for the question.
    """

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="imported_means")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="imported_means")
    value = models.FloatField()
    raters = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["response", "question"], name="imported_mean_unique_per_response_question"
            )
        ]

    def __str__(self) -> str:
        return f"mean {self.value} for response {self.response_id}"


class StudyImport(models.Model):
    """A record of one accepted import (rejected imports change nothing and leave no record).

    Undo (annotation/services/import_undo.py) needs to know what the import created: every context,
    reference, system, reply and annotator it creates points back to it (``source_import``); its ratings
    and mean ratings hang on its replies. A nullable key on the created rows, rather than a list of ids
    here, stays right whatever happens later: a row deleted in the meantime simply is not there, and a
    row is never claimed by two imports. Imports made before these keys existed have ``tracked`` False
    and cannot be undone. An undone import keeps its record, with ``undone_at``.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="imports")
    format = models.CharField(max_length=30)
    filenames = models.JSONField(default=list)
    counts = models.JSONField(default=dict)
    warnings = models.JSONField(default=list)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    tracked = models.BooleanField(
        default=False, help_text="the rows it created point back to it (imports before undo existed: no)"
    )
    undone_at = models.DateTimeField(null=True, blank=True, help_text="when its rows were deleted (undo)")
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.format} import into {self.study_id} at {self.created_at:%Y-%m-%d %H:%M}"
