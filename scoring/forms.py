from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import Study
from scoring.metrics.learned_specs import MODEL_KINDS
from scoring.metrics.registry import available_metric_names, available_system_metric_names, metric_spec
from scoring.models import ReferencesMode, TokenizerChoice, TrainedModel
from scoring.selectors import metrics_available_for_study, trained_models_all


def _model_field_name(kind: str) -> str:
    return f"model_{kind.replace('-', '_')}"


class ScoringRunForm(forms.Form):
    """Metrics, references, tokenizer and (for learned metrics) which trained model of each kind to use."""

    metrics = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    references = forms.ChoiceField(
        choices=ReferencesMode.choices, initial=ReferencesMode.MULTI, widget=forms.RadioSelect
    )
    tokenizer = forms.ChoiceField(
        choices=TokenizerChoice.choices,
        initial=TokenizerChoice.DEFAULT,
        required=False,  # a form posted without it (an older page, a script) gets the default
        widget=forms.RadioSelect,
        help_text="for every metric that tokenizes, except learned ones (their model's tokenizer)",
    )
    recompute = forms.BooleanField(
        required=False,
        label="Recompute scores that already exist",
        help_text="by default only replies without a score of the same signature are computed",
    )

    def __init__(self, *args: Any, study: Study | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        metrics_field = self.fields["metrics"]
        assert isinstance(metrics_field, forms.MultipleChoiceField)
        system_names = available_system_metric_names()
        metrics_field.choices = [
            *((name, _metric_label(name)) for name in available_metric_names()),
            *((name, f"{name} (system level)") for name in system_names),
        ]
        metrics_field.initial = [
            *(metrics_available_for_study(study=study) if study is not None else available_metric_names()),
            *system_names,
        ]
        for kind in MODEL_KINDS:
            self.fields[_model_field_name(kind)] = forms.ModelChoiceField(
                queryset=trained_models_all().filter(kind=kind),
                required=False,
                to_field_name="name",
                empty_label="the study's model (or the default)",
                label=f"{kind} model",
            )

    def clean_tokenizer(self) -> str:
        return str(self.cleaned_data.get("tokenizer") or TokenizerChoice.DEFAULT)

    def model_names(self) -> list[str]:
        """The trained models chosen explicitly, by name (empty: the study's choice or the default)."""
        chosen = [self.cleaned_data.get(_model_field_name(kind)) for kind in MODEL_KINDS]
        return [model.name for model in chosen if isinstance(model, TrainedModel)]

    def model_fields(self) -> list[forms.BoundField]:
        return [self[_model_field_name(kind)] for kind in MODEL_KINDS]


class StudyModelChoiceForm(forms.Form):
    """The trained model of each kind the study's learned metrics use (blank: the default).

    Its fields share names with the run form's model fields on the same page, so its ids get their own
    prefix (``study-model_ruber``): ids stay unique and labels point at the right select."""

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "study-%s")
        super().__init__(*args, **kwargs)
        chosen = {
            choice.kind: choice.trained_model.name
            for choice in study.model_choices.select_related("trained_model")
        }
        for kind in MODEL_KINDS:
            self.fields[_model_field_name(kind)] = forms.ModelChoiceField(
                queryset=trained_models_all().filter(kind=kind, language=study.language),
                required=False,
                to_field_name="name",
                empty_label="the default model",
                label=f"{kind} model",
                initial=chosen.get(kind),
            )

    def choices(self) -> dict[str, TrainedModel | None]:
        return {kind: self.cleaned_data.get(_model_field_name(kind)) for kind in MODEL_KINDS}


def _metric_label(name: str) -> str:
    spec = metric_spec(name)
    return f"{name} (needs a {spec.model_kind} model)" if spec.model_kind else name
