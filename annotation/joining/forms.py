"""Forms of joining a study: sign-up through the invite link, the consent, a training answer,
and the researcher's form that marks a reply as a training item.

The forms parse and bound what is typed; the rules live in the services (annotation/services/joining.py,
annotation/services/qualification.py), whose errors the views attach back to the field they name.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm

from annotation.models import Question, Response, Study
from annotation.services.qualification import MAX_EXPLANATION


class SignupForm(UserCreationForm):
    """A username and a password typed twice, checked by Django's password validators; no e-mail.

    Only validates: :func:`annotation.services.joining.volunteer_signup` creates the account."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        username = self.fields["username"]
        username.help_text = (
            "Letters, digits and @/./+/-/_ only; researchers never see it (you get a pseudonym)."
        )


class ConsentForm(forms.Form):
    agree = forms.BooleanField(
        label="I agree",
        error_messages={"required": "Tick “I agree” to take part; without it you cannot start."},
    )


class TrainingItemForm(forms.Form):
    """The researcher picks a reply (its id, or its external id) and a question, the right range and why."""

    reply = forms.CharField(
        max_length=200, label="Reply", help_text="Its id (the replies table below) or its external id."
    )
    question = forms.ChoiceField(choices=[])
    gold_min = forms.IntegerField(label="Lowest right score")
    gold_max = forms.IntegerField(label="Highest right score")
    explanation = forms.CharField(
        required=False,
        max_length=MAX_EXPLANATION,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Shown to the volunteer after they answer, right or wrong.",
    )

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study
        field = self.fields["question"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [
            (str(question.pk), f"{question.name} ({question.scale_min}-{question.scale_max})")
            for question in Question.objects.filter(study=study)
        ]

    def clean_reply(self) -> Response:
        key = str(self.cleaned_data["reply"]).strip()
        replies = Response.objects.filter(context__study=self.study).select_related("context")
        if key.isdigit():
            by_id = replies.filter(pk=int(key)).first()
            if by_id is not None:
                return by_id
        matches = list(replies.filter(external_id=key)[:2])
        if len(matches) > 1:
            raise forms.ValidationError("Several replies have this external id; give the reply's id.")
        if not matches:
            raise forms.ValidationError("No reply of this study has this id or external id.")
        return matches[0]

    def clean_question(self) -> Question:
        question = Question.objects.filter(study=self.study, pk=self.cleaned_data["question"]).first()
        if question is None:
            raise forms.ValidationError("Choose one of this study's questions.")
        return question
