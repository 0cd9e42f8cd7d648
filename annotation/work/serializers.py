"""Input and output shapes of the annotators' work API (annotation/work/api.py).

Input serializers check types only; the rules of the task (a point of the scale for every question, the
collection rules of Gupta et al. (2019) appendix A, ...) are the submission services', which name the field they
reject. The output serializers exist for the OpenAPI schema: the views return the selectors' dicts.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from annotation.models import WorkKind
from kernel.http.api_input import StrictInputSerializer
from kernel.url_converters import MAX_ID

TASK_KINDS = [WorkKind.RATE.value, WorkKind.WRITE.value, WorkKind.DIVERSITY.value, WorkKind.PAIR.value]
MAX_REFERENCE_CHARACTERS = 2000


class KindQuerySerializer(StrictInputSerializer):
    kind = serializers.ChoiceField(choices=TASK_KINDS, default=WorkKind.RATE.value)


class PreviousQuerySerializer(KindQuerySerializer):
    before = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="an assignment id: the last item answered before it",
    )


class WorkRatingInputSerializer(StrictInputSerializer):
    values = serializers.DictField(
        child=serializers.JSONField(), help_text="question name -> a point of its scale (integer)"
    )
    seconds = serializers.FloatField(
        required=False,
        allow_null=True,
        default=None,
        help_text="the client's own time on the item; stored as client_seconds, never used for flags "
        "(the server measures the time itself)",
    )


class WorkReferenceInputSerializer(StrictInputSerializer):
    # Blank and short texts reach the service, whose message is the collection task's own.
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=MAX_REFERENCE_CHARACTERS)
    seconds = serializers.FloatField(
        required=False,
        allow_null=True,
        default=None,
        help_text="the client's own time on the item; stored as client_seconds, never used for flags "
        "(the server measures the time itself)",
    )
    pasted = serializers.BooleanField(
        required=False,
        default=False,
        help_text="the client saw text arrive without key presses (adds a flag)",
    )
    keystrokes = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=0,
        max_value=999_999,
        help_text="key presses counted while the text was typed; fewer than half its visible characters "
        "flag it as pasted, and none sent flags it no-keystrokes",
    )


class WorkDiversityInputSerializer(StrictInputSerializer):
    appropriate = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
        required=False,
        default=list,
        help_text="ids of the replies shown",
    )
    meanings = serializers.IntegerField(min_value=0, max_value=1000)
    seconds = serializers.FloatField(
        required=False,
        allow_null=True,
        default=None,
        help_text="the client's own time on the item; stored as client_seconds, never used for flags "
        "(the server measures the time itself)",
    )


class WorkPairwiseInputSerializer(StrictInputSerializer):
    # Any text reaches the service, whose message names the field (annotation/services/pairwise.py).
    choice = serializers.CharField(
        max_length=10, help_text='"left" (Reply A is better), "right" (Reply B is better) or "tie", as shown'
    )
    seconds = serializers.FloatField(
        required=False,
        allow_null=True,
        default=None,
        help_text="the client's own time on the item; stored as client_seconds (the server measures its own)",
    )


class WorkJoinInputSerializer(StrictInputSerializer):
    token = serializers.CharField(max_length=100, help_text="the invite token of the study's invite link")


def first_error(errors: Any, prefix: str = "") -> tuple[str, str]:
    """The first problem of a serializer's errors as (dotted field, message), for the API's one-field
    error body: ``{"values": {"fluency": ["..."]}}`` gives ``("values.fluency", "...")``."""
    if isinstance(errors, dict):
        for key, value in errors.items():
            name = prefix if key == "non_field_errors" else f"{prefix}.{key}" if prefix else str(key)
            return first_error(value, name)
    if isinstance(errors, list) and errors:
        return first_error(errors[0], prefix)
    return prefix or "request", str(errors)


# Output shapes (documentation only).


class WorkErrorSerializer(serializers.Serializer):
    field = serializers.CharField(
        required=False, help_text="the input field at fault (absent when the body is not valid JSON)"
    )
    detail = serializers.CharField()


class WorkDetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class WorkProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()


class WorkTurnSerializer(serializers.Serializer):
    speaker = serializers.CharField()
    text = serializers.CharField()
    is_query = serializers.BooleanField()


class WorkPointSerializer(serializers.Serializer):
    value = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label


class WorkQuestionSerializer(serializers.Serializer):
    name = serializers.CharField()
    prompt = serializers.CharField()
    points = WorkPointSerializer(many=True)


class WorkReplySerializer(serializers.Serializer):
    id = serializers.IntegerField(required=False, help_text="diversity: the reply's id, to mark it")
    position = serializers.ChoiceField(
        choices=["left", "right"], required=False, help_text="pair: the side the reply is shown on"
    )
    label = serializers.CharField(required=False, help_text="pair: Reply A (left) or Reply B (right)")  # type: ignore[assignment]
    text = serializers.CharField()


class WorkScreenSerializer(serializers.Serializer):
    """An item to work on (``done`` false), or why there is none (``done`` true, ``reason``, ``message``).

    ``kind`` rate: ``turns``, ``reply``, ``questions``, ``answers`` (own earlier values), ``reference``
    (only when the study shows one); write: ``turns``, ``quota``, ``written``, ``remaining``; diversity:
    ``turns``, ``replies``, ``answers``; pair: ``turns``, ``prompt``, ``replies`` (``position`` left or
    right, ``label`` Reply A or B, ``text``; never an id) and ``answers`` (``{"choice": "left"}``)."""

    done = serializers.BooleanField()
    reason = serializers.ChoiceField(choices=["done", "cap", "blocked", "busy", "closed"], required=False)
    message = serializers.CharField(required=False)
    progress = WorkProgressSerializer()
    resumed = serializers.BooleanField(required=False)
    assignment = serializers.IntegerField(required=False, allow_null=True)
    kind = serializers.CharField(
        required=False, help_text="rate (attention checks too), write, diversity or pair"
    )
    status = serializers.CharField(required=False)
    sequence = serializers.IntegerField(required=False)
    turns = WorkTurnSerializer(many=True, required=False)
    reply = serializers.CharField(required=False)
    questions = WorkQuestionSerializer(many=True, required=False)
    answers = serializers.JSONField(required=False, allow_null=True)
    reference = serializers.CharField(required=False, allow_null=True)
    quota = serializers.IntegerField(required=False)
    written = serializers.ListField(child=serializers.CharField(), required=False)
    remaining = serializers.IntegerField(required=False)
    replies = WorkReplySerializer(many=True, required=False)
    prompt = serializers.CharField(required=False, help_text="pair: the study's pairwise question")


class WorkSubmitSerializer(serializers.Serializer):
    warnings = serializers.ListField(child=serializers.CharField())
    blocked = serializers.BooleanField()
    remaining = serializers.IntegerField(help_text="references still to write for this context")
    progress = WorkProgressSerializer()


class WorkSkipSerializer(serializers.Serializer):
    skipped = serializers.BooleanField()


class WorkJoinSerializer(serializers.Serializer):
    study = serializers.IntegerField()
    name = serializers.CharField()
    annotator = serializers.CharField(help_text="your pseudonym in this study")
    tasks = serializers.ListField(child=serializers.CharField(), help_text="rate, write, diversity, pair")
