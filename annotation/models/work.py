"""Annotation work: what is handed out (work items), to whom (assignments), and what comes back besides
ratings (attention-check answers, diversity judgments).

A :class:`WorkItem` is one unit an annotator is given: a reply to rate (all the study's questions on one
screen), a context to write references for, a system's several replies to one context for diversity
judgment, or an attention check. ``wanted`` is how many different annotators it needs (k for ratings,
Tao et al. (2018) section 4.1 uses 9; writers per context for reference collection) and ``taken`` counts the
assignments that are active or done; a rating item also knows how many raters of imported data rated its
reply (``imported``), which the study may count toward k (``Study.count_imported_ratings``), so that
``wanted`` is what is still missing. ``taken <= wanted`` is a database constraint, and the assignment
engine only ever raises ``taken`` with a conditional ``UPDATE ... WHERE taken < wanted``, so two
annotators can never both get the last slot of an item, whatever the database and however many web
processes run.
"""

from __future__ import annotations

import secrets

from django.db import models
from django.db.models import F, Q

from annotation.models.study import Annotator, DialogContext, Question, Response, Study, System


class WorkKind(models.TextChoices):
    RATE = "rate", "rate a reply"
    WRITE = "write", "write references for a context"
    DIVERSITY = "diversity", "judge the diversity of a system's replies"
    CHECK = "check", "attention check"
    PAIR = "pair", "compare two replies to one context"


class AttentionCheck(models.Model):
    """A reply shown like any other, whose answer is known: ``expected_min <= value <= expected_max``.

    ``marked``: a researcher marked a reply of the study as a check (a copy is shown, so the real reply's
    ratings stay clean). ``distractor``: the app took a reply from an unrelated dialog, which should
    score low.
    """

    class Origin(models.TextChoices):
        MARKED = "marked", "marked by the researcher"
        DISTRACTOR = "distractor", "reply from an unrelated dialog"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="attention_checks")
    context = models.ForeignKey(DialogContext, on_delete=models.CASCADE, related_name="attention_checks")
    text = models.TextField()
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="attention_checks")
    expected_min = models.SmallIntegerField()
    expected_max = models.SmallIntegerField()
    origin = models.CharField(max_length=10, choices=Origin.choices)
    source_response = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(expected_max__gte=F("expected_min")), name="check_expected_order"
            )
        ]

    def __str__(self) -> str:
        return f"check {self.pk}: {self.expected_min}-{self.expected_max} on {self.question_id}"

    def passes(self, value: int) -> bool:
        return self.expected_min <= value <= self.expected_max


POOL_RANK_RANGE = 2**31 - 1


def new_pool_rank() -> int:
    """A work item's random place among the items with as many answers (the assignment engine's window,
    annotation/services/assignment.py)."""
    return secrets.randbelow(POOL_RANK_RANGE)


class WorkItem(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="work_items")
    kind = models.CharField(max_length=10, choices=WorkKind.choices)
    response = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.CASCADE, related_name="work_items"
    )
    response_b = models.ForeignKey(
        Response,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="pairwise items: the other reply (response_id < response_b_id)",
    )
    context = models.ForeignKey(
        DialogContext, null=True, blank=True, on_delete=models.CASCADE, related_name="work_items"
    )
    system = models.ForeignKey(System, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    attention_check = models.ForeignKey(
        AttentionCheck, null=True, blank=True, on_delete=models.CASCADE, related_name="work_items"
    )
    wanted = models.PositiveIntegerField(help_text="different annotators this item needs")
    taken = models.PositiveIntegerField(default=0, help_text="assignments active or done")
    done = models.PositiveIntegerField(default=0, help_text="assignments done")
    imported = models.PositiveIntegerField(
        default=0,
        help_text="rating items: raters from imported data who rated the reply; when the study counts them "
        "toward k, wanted is k minus these (annotation/services/work_items.py)",
    )
    pool_rank = models.IntegerField(
        default=new_pool_rank,
        help_text="random place among the items with as many answers: which of them the hand-out looks at",
    )

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["study", "kind", "taken", "pool_rank"], name="workitem_pool_rank")]
        constraints = [
            models.CheckConstraint(condition=Q(taken__lte=F("wanted")), name="workitem_taken_within_wanted"),
            models.UniqueConstraint(
                fields=["kind", "response"],
                condition=Q(response__isnull=False, response_b__isnull=True),
                name="workitem_unique_response",
            ),
            models.UniqueConstraint(
                fields=["response", "response_b"],
                condition=Q(response_b__isnull=False),
                name="workitem_unique_pair",
            ),
            models.CheckConstraint(
                condition=Q(response_b__isnull=True) | Q(response__lt=F("response_b")),
                name="workitem_pair_ordered",
            ),
            models.UniqueConstraint(
                fields=["kind", "context", "system"],
                condition=Q(context__isnull=False, response__isnull=True),
                name="workitem_unique_context",
            ),
            models.UniqueConstraint(
                fields=["attention_check"],
                condition=Q(attention_check__isnull=False),
                name="workitem_unique_check",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} item {self.pk} ({self.taken}/{self.wanted})"


class AssignmentStatus(models.TextChoices):
    ACTIVE = "active", "handed out, not answered yet"
    DONE = "done", "answered"
    SKIPPED = "skipped", "skipped by the annotator"
    EXPIRED = "expired", "not answered in time; back in the pool"


class Assignment(models.Model):
    """One work item handed to one annotator; never two for the same pair (an item is rated once each)."""

    item = models.ForeignKey(WorkItem, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=8, choices=AssignmentStatus.choices, default=AssignmentStatus.ACTIVE)
    sequence = models.PositiveIntegerField(help_text="1 for the annotator's first item of this kind, ...")
    quota = models.PositiveSmallIntegerField(
        default=1, help_text="references to write (collection items); 1 otherwise"
    )
    handed_at = models.DateTimeField(auto_now_add=True)
    served_at = models.DateTimeField(
        null=True, blank=True, help_text="when the item was last shown; the server's time counts from here"
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.FloatField(null=True, blank=True, help_text="measured by the server")
    client_seconds = models.FloatField(
        null=True, blank=True, help_text="the browser's own figure (kept, never trusted for flags)"
    )

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["annotator", "status"], name="assignment_by_annotator")]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="assignment_unique_item_annotator")
        ]

    def __str__(self) -> str:
        return f"{self.item} to {self.annotator} ({self.status})"


class CheckAnswer(models.Model):
    """An annotator's answer to an attention check (kept apart from ratings, so reports never see it)."""

    attention_check = models.ForeignKey(AttentionCheck, on_delete=models.CASCADE, related_name="answers")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="check_answers")
    value = models.SmallIntegerField()
    passed = models.BooleanField()
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["attention_check", "annotator"], name="check_answer_unique_per_annotator"
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator} answered check {self.attention_check_id}: {self.value}"


class DiversityJudgment(models.Model):
    """Gupta et al. (2019) section 5.2: which of a system's replies to a context are appropriate, then how many
    different meanings the appropriate ones carry."""

    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="diversity_judgments")
    context = models.ForeignKey(DialogContext, on_delete=models.CASCADE, related_name="diversity_judgments")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="diversity_judgments")
    appropriate = models.ManyToManyField(Response, related_name="judged_appropriate", blank=True)
    meanings = models.PositiveSmallIntegerField(help_text="different meanings among the appropriate replies")
    seconds_spent = models.FloatField(null=True, blank=True, help_text="measured by the server")
    client_seconds = models.FloatField(
        null=True, blank=True, help_text="the browser's own figure (kept, never trusted for flags)"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "context", "system"], name="diversity_unique_per_annotator"
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator}: {self.meanings} meanings for {self.system_id} on {self.context_id}"


class PairwiseChoice(models.TextChoices):
    A = "a", "the first reply (response_a) is better"
    B = "b", "the second reply (response_b) is better"
    TIE = "tie", "neither is better"


class PairwiseJudgment(models.Model):
    """Which of two replies to the same context is better, or a tie, by one rater.

    ``response_a`` is always the reply with the lower id (the pair's canonical order); which of the two the
    rater saw on the left is kept in ``shown_first``, so position bias can be checked.
    """

    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="pairwise_judgments")
    response_a = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    response_b = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    choice = models.CharField(max_length=3, choices=PairwiseChoice.choices)
    shown_first = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    seconds_spent = models.FloatField(null=True, blank=True, help_text="measured by the server")
    client_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "response_a", "response_b"], name="pairwise_unique_per_annotator"
            ),
            models.CheckConstraint(condition=Q(response_a__lt=F("response_b")), name="pairwise_ordered"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator}: {self.choice} on {self.response_a_id} vs {self.response_b_id}"
