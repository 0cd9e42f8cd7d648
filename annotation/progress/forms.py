"""Forms of the researcher's annotation page: settings, attention checks, per-annotator decisions.

The forms only parse and bound what is typed; the rules live in the services (study_settings, checks),
whose errors the views attach back to the field they name.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django import forms

from annotation.form_checkboxes import KeptValuesForm, MarkedCheckboxInput
from annotation.models import CheckAction, CollectionMode, Question, Study
from annotation.services.checks import MAX_DISTRACTORS_PER_CALL
from annotation.services.study_settings import AnnotationSettings

INCLUSION_CHOICES = [
    ("auto", "by threshold"),
    ("include", "always include"),
    ("exclude", "always exclude"),
]


class AnnotationSettingsForm(KeptValuesForm):
    """The settings card of the annotation page. A POST that lacks an optional field (a page rendered before
    the field existed, a client posting only what it changes) keeps the study's current value
    (annotation/form_checkboxes.py): a text or number field only when its key is missing (posted empty, it
    is cleared or reset to its default as before), a checkbox only when its hidden ``<name>_present``
    marker is missing too (a box unticked on the current page still turns the setting off). A required
    field missing from the POST is refused, naming it."""

    rating_enabled = forms.BooleanField(
        required=False, widget=MarkedCheckboxInput, label="Annotators rate replies"
    )
    ratings_per_item = forms.IntegerField(
        min_value=1,
        max_value=50,
        label="Ratings wanted per reply (k)",
        help_text="RUBER used 9; 3-5 is common.",
    )
    count_imported_ratings = forms.BooleanField(
        required=False,
        widget=MarkedCheckboxInput,
        label="Ratings imported from files count toward k",
        help_text="A reply imported with k ratings is complete and handed to nobody. "
        "Off: a fresh collection, k ratings per reply given in this app.",
    )
    show_reference = forms.BooleanField(
        required=False,
        widget=MarkedCheckboxInput,
        label="Show a reference reply to raters",
        help_text="Off by default: raters judge the reply, not its overlap with a reference.",
    )
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        label="Rating instructions",
        help_text="Shown before the first item to rate (and in the qualification round) and reopenable; "
        "give a good and a bad worked example. The writing task has its own.",
    )
    references_wanted = forms.IntegerField(
        min_value=0,
        max_value=20,
        label="References to collect per context (N)",
        help_text="0: no collection task. The multi-reference study collected 4.",
    )
    collection_mode = forms.ChoiceField(choices=CollectionMode.choices, label="Who writes them")
    diversity_enabled = forms.BooleanField(
        required=False,
        widget=MarkedCheckboxInput,
        label="Diversity task (contexts with several replies of one system)",
    )
    pairwise_enabled = forms.BooleanField(
        required=False,
        widget=MarkedCheckboxInput,
        label="Pairwise task (which of two systems' replies to a context is better)",
    )
    pairwise_prompt = forms.CharField(
        required=False,
        max_length=300,
        label="Question of the pairwise task",
        help_text="Empty: “Which reply is the better response to the conversation?”",
    )
    max_items_per_annotator = forms.IntegerField(
        required=False, min_value=1, label="Items per annotator at most", help_text="Empty: no cap."
    )
    hold_minutes = forms.FloatField(
        min_value=1,
        max_value=7 * 24 * 60,
        label="Minutes before an unanswered item goes back to the pool",
    )
    check_interval = forms.IntegerField(
        min_value=0,
        max_value=1000,
        label="One attention check about every … items",
        help_text="0: no attention checks.",
    )
    check_action = forms.ChoiceField(choices=CheckAction.choices, label="When checks are failed")
    check_failures_allowed = forms.IntegerField(
        min_value=0, max_value=1000, label="Failed checks tolerated before that"
    )
    kappa_threshold = forms.FloatField(
        required=False,
        min_value=-1,
        max_value=1,
        label="Exclude annotators whose agreement (kappa) is below",
        help_text="The multi-reference study used 0.2. Empty: keep everyone. Nothing is deleted.",
    )
    min_seconds_per_item = forms.FloatField(
        min_value=0, max_value=3600, label="Answers faster than this many seconds are flagged"
    )
    invites_open = forms.BooleanField(
        required=False, widget=MarkedCheckboxInput, label="The invite link admits new annotators"
    )
    # Joining: sign-up, consent, crowd platforms, the qualification round.
    signup_open = forms.BooleanField(
        required=False,
        widget=MarkedCheckboxInput,
        label="New volunteers can sign up through the invite link",
        help_text="A user name and a password, no e-mail. Off: only people with an account can join.",
    )
    consent_text = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        label="Consent text",
        help_text="Volunteers must accept it before their first item. "
        "Empty: the study's description and instructions are shown instead.",
    )
    crowd_id_parameter = forms.CharField(
        required=False,
        max_length=40,
        label="Crowd worker id parameter of the invite link",
        help_text="e.g. PROLIFIC_PID (Prolific) or workerId (MTurk): a visitor arriving with it gets an "
        "account from the id. Empty: none.",
    )
    completion_code = forms.CharField(
        required=False,
        max_length=60,
        label="Completion code",
        help_text="Shown to an annotator who has finished, to enter on the crowd platform.",
    )
    qualification_threshold = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Share of training items to get right to qualify",
        help_text="Only when the study has training items (“Joining and qualification”, above). Empty: 0.8.",
    )

    @classmethod
    def for_study(cls, study: Study, data: Any = None) -> AnnotationSettingsForm:
        current = AnnotationSettings.of(study)
        initial = {
            name: value
            for name, value in asdict(current).items()
            if name != "hold_seconds" and name in cls.base_fields
        }
        initial["hold_minutes"] = round(current.hold_seconds / 60, 2)
        return cls(data=data, initial=initial, prefix="settings")

    def annotation_settings(self) -> AnnotationSettings:
        """The cleaned values as the service's input (call after ``is_valid()``)."""
        data = dict(self.cleaned_data)
        data["hold_seconds"] = round(float(data.pop("hold_minutes")) * 60)
        data["instructions"] = str(data.get("instructions") or "").strip()
        for name in ("consent_text", "crowd_id_parameter", "completion_code"):
            data[name] = str(data.get(name) or "").strip()
        if data.get("qualification_threshold") is None:
            data["qualification_threshold"] = Study._meta.get_field("qualification_threshold").get_default()
        data["pairwise_prompt"] = str(data.get("pairwise_prompt") or "").strip() or str(
            Study._meta.get_field("pairwise_prompt").get_default()
        )
        return AnnotationSettings(**data)


class QuestionChoiceMixin(forms.Form):
    question = forms.ChoiceField(choices=[])

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study
        field = self.fields["question"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [
            (str(question.pk), f"{question.name} ({question.scale_min}-{question.scale_max})")
            for question in Question.objects.filter(study=study)
        ]

    def clean_question(self) -> Question:
        question = Question.objects.filter(study=self.study, pk=self.cleaned_data["question"]).first()
        if question is None:
            raise forms.ValidationError("Choose one of this study's questions.")
        return question


class CheckMarkForm(QuestionChoiceMixin):
    response = forms.IntegerField(
        min_value=1, label="Reply id", help_text="The id column of the “Replies to rate” table above."
    )
    expected_min = forms.IntegerField(label="Lowest expected score")
    expected_max = forms.IntegerField(label="Highest expected score")

    field_order = ["response", "question", "expected_min", "expected_max"]


class DistractorsForm(QuestionChoiceMixin):
    count = forms.IntegerField(min_value=1, max_value=MAX_DISTRACTORS_PER_CALL, initial=5, label="How many")

    field_order = ["count", "question"]


class InclusionForm(forms.Form):
    report_inclusion = forms.ChoiceField(choices=INCLUSION_CHOICES, label="Counts in reports")
