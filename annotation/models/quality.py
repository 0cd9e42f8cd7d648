"""Quality control the researcher steers: training items with gold answers for the
qualification round, annotators' comments and flags on items, and the researcher's adjudication of a reply
(a gold value, or leaving it out of reports) that deletes nothing.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation.models.study import Annotator, DialogContext, Question, Response, Study, System


class TrainingItem(models.Model):
    """A reply with a known answer to one question, shown in the qualification round with feedback.

    An answer counts as right when ``gold_min <= value <= gold_max``; ``explanation`` is shown after the
    answer, right or wrong.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="training_items")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="training_items")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="training_items")
    gold_min = models.SmallIntegerField()
    gold_max = models.SmallIntegerField()
    explanation = models.TextField(blank=True, help_text="shown to the volunteer after they answer")
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "question"], name="training_unique_response_question"
            ),
            models.CheckConstraint(condition=Q(gold_max__gte=F("gold_min")), name="training_gold_order"),
        ]

    def __str__(self) -> str:
        return f"training {self.pk}: {self.gold_min}-{self.gold_max} on {self.question_id}"

    def accepts(self, value: int) -> bool:
        return self.gold_min <= value <= self.gold_max


class TrainingAnswer(models.Model):
    training_item = models.ForeignKey(TrainingItem, on_delete=models.CASCADE, related_name="answers")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="training_answers")
    value = models.SmallIntegerField()
    correct = models.BooleanField()
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["training_item", "annotator"], name="training_answer_once")
        ]

    def __str__(self) -> str:
        return f"{self.annotator} answered training {self.training_item_id}: {self.value}"


class NoteKind(models.TextChoices):
    COMMENT = "comment", "comment"
    FLAG = "flag", "flag"


class FlagReason(models.TextChoices):
    OFFENSIVE = "offensive", "offensive"
    BROKEN = "broken", "broken or unreadable"
    NOT_A_REPLY = "not-a-reply", "not a reply to this context"
    OTHER = "other", "other"


class ItemNote(models.Model):
    """An annotator's comment on an item, or a flag with a reason, listed for the researcher."""

    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="notes")
    response = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.CASCADE, related_name="notes"
    )
    # A note on a pairwise comparison is on both replies shown: ``response`` and ``response_b`` (the
    # pair's lower and higher reply id). Empty for every other kind of item.
    response_b = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.CASCADE, related_name="pair_notes"
    )
    context = models.ForeignKey(DialogContext, on_delete=models.CASCADE, related_name="notes")
    # A note on a diversity item (one system's replies to the context): that system. Empty otherwise.
    system = models.ForeignKey(
        System, null=True, blank=True, on_delete=models.CASCADE, related_name="item_notes"
    )
    kind = models.CharField(max_length=8, choices=NoteKind.choices)
    reason = models.CharField(max_length=12, choices=FlagReason.choices, blank=True)
    text = models.TextField(blank=True, max_length=2000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind=NoteKind.COMMENT, reason="") | Q(kind=NoteKind.FLAG) & ~Q(reason=""),
                name="note_flag_has_reason",
            ),
            models.CheckConstraint(
                condition=Q(response_b__isnull=True) | Q(response__isnull=False),
                name="note_pair_has_both_replies",
            ),
        ]

    def __str__(self) -> str:
        if self.response_b_id is not None:
            return f"{self.kind} by {self.annotator} on the pair {self.response_id} / {self.response_b_id}"
        return f"{self.kind} by {self.annotator} on {self.response_id or self.context_id}"


class Adjudication(models.Model):
    """The researcher's decision on one reply: leave it out of reports, and/or a gold value per question
    (``gold``: question name -> value). Nothing is deleted; undoing is clearing the fields."""

    response = models.OneToOneField(Response, on_delete=models.CASCADE, related_name="adjudication")
    excluded = models.BooleanField(default=False, help_text="left out of every report")
    gold = models.JSONField(default=dict, blank=True, help_text="question name -> the adjudicated value")
    note = models.TextField(blank=True, max_length=2000)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"adjudication of {self.response_id}"
