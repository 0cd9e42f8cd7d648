"""The study page's scoring forms: a scoring run (metrics, references, tokenizer, implementations and their
options, word vectors, trained models, LLM judges) and the trained model of each kind the study's runs use."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import Study
from scoring.judges.run_fields import JudgeFieldsMixin
from scoring.metrics.registry import (
    available_metric_names,
    available_system_metric_names,
    implementation_names,
    metric_spec,
)
from scoring.metrics.spec import DEFAULT_IMPLEMENTATION
from scoring.models import ReferencesMode, TokenizerChoice, TrainedModel
from scoring.selectors import metrics_available_for_study, trained_models_all, word_vectors_choices
from scoring.trainers import trainer_kinds


def _model_field_name(kind: str) -> str:
    return f"model_{kind.replace('-', '_')}"


# The run form's option fields: (option, label, values); blank means the implementation's default.
IMPLEMENTATION_OPTION_FIELDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("tok", "sacrebleu tokenizer", ("13a", "intl", "zh", "none", "char")),
    ("smooth", "sacrebleu smoothing", ("exp", "floor", "add-k", "none")),
    ("eff", "sacrebleu effective order", ("yes", "no")),
    ("case", "case (sacrebleu, chrF)", ("mixed", "lc")),
    ("stem", "rouge-score Porter stemmer", ("no", "yes")),
    ("oov", "embedding metrics: a word without a vector", ("skip", "mean")),
)


def _option_field_name(option: str) -> str:
    return f"option_{option}"


class ScoringRunForm(JudgeFieldsMixin, forms.Form):
    """Metrics, references, tokenizer, the implementations of the baselines and their options,
    the word vectors, (for learned metrics) which trained model of each kind to use, and LLM judges
    (``scoring/judges/run_fields.py``). A run asks for at least one metric or one judge."""

    metrics = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False)
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
    implementation = forms.ChoiceField(
        required=False,
        label="Implementation",
        help_text="the tool that computes the word-overlap and embedding baselines, named in each signature "
        "(impl:): nltk's formulas by default; nlg-eval (pycocoevalcap: the dialog papers' tables); "
        "sacrebleu; rouge-score",
    )
    implementation_families = forms.CharField(
        required=False,
        max_length=200,
        label="Or per family",
        help_text="e.g. bleu=sacrebleu,meteor=nlg-eval,rouge=rouge-score (overrides the choice above)",
    )
    vectors = forms.ChoiceField(
        required=False, label="Word vectors", help_text="for the embedding metrics (GloVe 6B 50d by default)"
    )
    recompute = forms.BooleanField(
        required=False,
        label="Recompute scores that already exist",
        help_text="by default only replies without a score of the same signature are computed",
    )

    def __init__(self, *args: Any, study: Study | None = None, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        implementation_field = self.fields["implementation"]
        assert isinstance(implementation_field, forms.ChoiceField)
        implementation_field.choices = [
            ("", "default (nltk where the metric has it)"),
            *((name, name) for name in implementation_names() if name != DEFAULT_IMPLEMENTATION),
            (DEFAULT_IMPLEMENTATION, f"{DEFAULT_IMPLEMENTATION} only"),
        ]
        vectors_field = self.fields["vectors"]
        assert isinstance(vectors_field, forms.ChoiceField)
        vectors_field.choices = [("", "GloVe 6B 50d (built in)"), *word_vectors_choices()]
        for option, label, values in IMPLEMENTATION_OPTION_FIELDS:
            self.fields[_option_field_name(option)] = forms.ChoiceField(
                required=False,
                label=label,
                choices=[("", "the implementation's default"), *((value, value) for value in values)],
            )
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
        for kind in trainer_kinds():
            self.fields[_model_field_name(kind)] = forms.ModelChoiceField(
                queryset=trained_models_all().filter(kind=kind),
                required=False,
                to_field_name="name",
                empty_label="the study's model (or the default)",
                label=f"{kind} model",
            )
        self.add_judge_fields(study=study, user=user)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not cleaned.get("metrics") and not cleaned.get("judge_templates") and "metrics" not in self.errors:
            self.add_error("metrics", "choose at least one metric or an LLM judge's prompt template")
        return cleaned

    def clean_tokenizer(self) -> str:
        return str(self.cleaned_data.get("tokenizer") or TokenizerChoice.DEFAULT)

    def implementation_text(self) -> str:
        """The run's implementation choice: the per-family text when given, else the select's value."""
        return str(
            self.cleaned_data.get("implementation_families") or self.cleaned_data.get("implementation") or ""
        )

    def options(self) -> dict[str, str]:
        """The implementation options set to something other than the default."""
        chosen = {
            option: self.cleaned_data.get(_option_field_name(option))
            for option, _, _ in IMPLEMENTATION_OPTION_FIELDS
        }
        return {option: str(value) for option, value in chosen.items() if value}

    def option_fields(self) -> list[forms.BoundField]:
        return [self[_option_field_name(option)] for option, _, _ in IMPLEMENTATION_OPTION_FIELDS]

    def model_names(self) -> list[str]:
        """The trained models chosen explicitly, by name (empty: the study's choice or the default)."""
        chosen = [self.cleaned_data.get(_model_field_name(kind)) for kind in trainer_kinds()]
        return [model.name for model in chosen if isinstance(model, TrainedModel)]

    def model_fields(self) -> list[forms.BoundField]:
        return [self[_model_field_name(kind)] for kind in trainer_kinds()]


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
        for kind in trainer_kinds():
            self.fields[_model_field_name(kind)] = forms.ModelChoiceField(
                queryset=trained_models_all().filter(kind=kind, language=study.language),
                required=False,
                to_field_name="name",
                empty_label="the default model",
                label=f"{kind} model",
                initial=chosen.get(kind),
            )

    def choices(self) -> dict[str, TrainedModel | None]:
        return {kind: self.cleaned_data.get(_model_field_name(kind)) for kind in trainer_kinds()}


def _metric_label(name: str) -> str:
    spec = metric_spec(name)
    if spec.model_kind:
        return f"{name} (needs a {spec.model_kind} model)"
    if spec.implementations and DEFAULT_IMPLEMENTATION not in spec.implementations:
        return f"{name} ({', '.join(spec.implementations)})"
    return name
