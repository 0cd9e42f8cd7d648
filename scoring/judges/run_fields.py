"""The "LLM judges" part of the study page's run form: the prompt templates (shipped and the researcher's
own), the backend and model the operator configured, the study's questions (none ticked: all of them) and
the reading. Each template ticked is one :class:`JudgeRequest`; the run's service turns them into metrics
(:func:`scoring.services.runs.scoring_run_create`, ``judges``)."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib.auth.models import AnonymousUser, User

from annotation.models import Study
from scoring.judges.backends import AvailableJudges, judges_available
from scoring.judges.definitions import JudgeRequest
from scoring.judges.templates import templates_for
from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, BACKEND_SERVER
from scoring.metrics.llm_judge.judging import READ_ARGMAX, READ_EXPECTATION
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES

# The form field of each field of a JudgeRequest (an error of the service is shown under it).
JUDGE_FORM_FIELDS = {
    "template": "judge_templates",
    "backend": "judge_backend",
    "model": "judge_model",
    "questions": "judge_questions",
    "read": "judge_read",
}
BACKEND_LABELS = {
    BACKEND_LOCAL: "local model (in the worker's process)",
    BACKEND_SERVER: "endpoint (an OpenAI-compatible server the operator configured)",
}
READ_LABELS = (
    (READ_EXPECTATION, "expectation: the probability-weighted mean of the labels (G-EVAL)"),
    (READ_ARGMAX, "argmax: the most likely label"),
)


def rating_template_choices(user: User | AnonymousUser | None) -> list[tuple[str, str]]:
    """The templates a rating judge may ask (pairwise ones compare two replies: not yet offered)."""
    return [
        (name, f"{name} ({'shipped' if name in BUILT_IN_TEMPLATES else 'yours'})")
        for name, template in templates_for(user).items()
        if not template.pairwise
    ]


def judge_form_fields(
    *, study: Study | None, user: Any, available: AvailableJudges
) -> dict[str, forms.Field]:
    """The judge fields of the run form (none when the operator configured no model or endpoint)."""
    if not available.backends:
        return {}
    questions = list(study.questions.all()) if study is not None else []
    model_groups: list[tuple[str, Any]] = [("", "the only one of the backend")]
    model_groups += [
        (label, [(name, name) for name in available.names(backend)])
        for backend, label in ((BACKEND_LOCAL, "Local models"), (BACKEND_SERVER, "Endpoints"))
        if available.names(backend)
    ]
    owner = user if isinstance(user, User) else None
    return {
        "judge_templates": forms.MultipleChoiceField(
            required=False,
            label="Prompt templates",
            choices=rating_template_choices(owner),
            widget=forms.CheckboxSelectMultiple,
            help_text="one judge per template ticked (and per question)",
        ),
        "judge_backend": forms.ChoiceField(
            required=False,
            label="Backend",
            choices=[(backend, BACKEND_LABELS[backend]) for backend in available.backends],
            initial=available.backends[0],
            widget=forms.RadioSelect,
        ),
        "judge_model": forms.ChoiceField(required=False, label="Model", choices=model_groups),
        "judge_questions": forms.MultipleChoiceField(
            required=False,
            label="Questions",
            choices=[(question.name, question.name) for question in questions],
            widget=forms.CheckboxSelectMultiple,
            help_text="none ticked: every question of the study",
        ),
        "judge_read": forms.ChoiceField(
            required=False,
            label="Reading",
            choices=READ_LABELS,
            initial=READ_EXPECTATION,
            widget=forms.RadioSelect,
        ),
    }


class JudgeFieldsMixin:
    """Adds the judge fields to a form (``add_judge_fields``) and reads them back as requests."""

    fields: dict[str, forms.Field]
    cleaned_data: dict[str, Any]
    judges: AvailableJudges

    def add_judge_fields(self, *, study: Study | None, user: Any) -> None:
        self.judges = judges_available()
        self.fields.update(judge_form_fields(study=study, user=user, available=self.judges))

    def judge_requests(self) -> list[JudgeRequest]:
        """One request per template ticked (empty when none is)."""
        data = self.cleaned_data
        backend = str(data.get("judge_backend") or (self.judges.backends or (BACKEND_LOCAL,))[0])
        return [
            JudgeRequest(
                template=str(template),
                backend=backend,
                model=str(data.get("judge_model") or ""),
                questions=tuple(str(name) for name in data.get("judge_questions") or ()),
                read=str(data.get("judge_read") or READ_EXPECTATION),
            )
            for template in data.get("judge_templates") or ()
        ]

    def judge_fields(self) -> list[forms.BoundField]:
        form = cast(forms.BaseForm, self)
        return [form[name] for name in JUDGE_FORM_FIELDS.values() if name in self.fields]
