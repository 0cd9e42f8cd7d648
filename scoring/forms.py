from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import Study
from scoring.metrics.bert_ruber.cells import FAST_CELLS
from scoring.metrics.learned_specs import FACTORIAL_CELLS, MODEL_KINDS
from scoring.metrics.maude.variants import ALL_VARIANTS, DEFAULT_VARIANTS
from scoring.metrics.registry import (
    available_metric_names,
    available_system_metric_names,
    implementation_names,
    metric_spec,
)
from scoring.metrics.ruber.corpus import DAILYDIALOG
from scoring.metrics.spec import DEFAULT_IMPLEMENTATION
from scoring.models import ModelKind, ReferencesMode, TokenizerChoice, TrainedModel
from scoring.selectors import metrics_available_for_study, trained_models_all, word_vectors_choices
from scoring.services.training_jobs import GENERIC_FORMAT, MAX_EPOCHS, corpora_known


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


class ScoringRunForm(forms.Form):
    """Metrics, references, tokenizer, the implementations of the baselines and their options (issue 23),
    the word vectors, and (for learned metrics) which trained model of each kind to use."""

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

    def __init__(self, *args: Any, study: Study | None = None, **kwargs: Any) -> None:
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
    if spec.model_kind:
        return f"{name} (needs a {spec.model_kind} model)"
    if spec.implementations and DEFAULT_IMPLEMENTATION not in spec.implementations:
        return f"{name} ({', '.join(spec.implementations)})"
    return name


class TrainingJobForm(forms.Form):
    """Train a learned metric's model from the study page (issue 14): kind, name, corpus (one the server
    knows, or an upload), format, epochs, BERT-RUBER's cells (the fast ones ticked), MaUde's variants."""

    kind = forms.ChoiceField(choices=ModelKind.choices, initial=ModelKind.RUBER)
    name = forms.CharField(
        max_length=80, help_text="letters, digits, - and _; the model is listed and chosen by it"
    )
    corpus = forms.ChoiceField(
        required=False,
        label="Corpus on the server",
        help_text="or upload one below (an upload is used when given)",
    )
    corpus_file = forms.FileField(
        required=False,
        label="or upload a corpus",
        help_text="one file; a file cannot be kept across an error: choose it again",
    )
    corpus_format = forms.ChoiceField(
        label="Format",
        choices=[
            (DAILYDIALOG, "DailyDialog: one dialogue per line, turns separated by __eou__"),
            (
                GENERIC_FORMAT,
                'generic JSON Lines: {"query": ..., "reply": ...} per line (MaUde, Cross-RUBER: {"turns": [...]})',
            ),
        ],
        initial=DAILYDIALOG,
        widget=forms.RadioSelect,
    )
    epochs = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_EPOCHS,
        initial=10,
        help_text="the most epochs; early stopping on the validation ranking accuracy may stop sooner",
    )
    max_pairs = forms.IntegerField(
        required=False, min_value=2, label="At most this many pairs", help_text="blank: the whole corpus"
    )
    cells = forms.MultipleChoiceField(
        required=False,
        choices=[(cell, cell) for cell in FACTORIAL_CELLS],
        initial=list(FAST_CELLS),
        widget=forms.CheckboxSelectMultiple,
        label="BERT-RUBER cells",
        help_text="the pooling cells train in minutes; the Bi-GRU (rnn) cells take hours on a CPU",
    )
    variants = forms.MultipleChoiceField(
        required=False,
        choices=[(name, name) for name in ALL_VARIANTS],
        initial=list(DEFAULT_VARIANTS),
        widget=forms.CheckboxSelectMultiple,
        label="MaUde variants",
    )
    make_default = forms.BooleanField(
        required=False, label="Make it the default model of its kind (for studies that choose none)"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "train-%s")  # unique ids beside the run form on the same page
        super().__init__(*args, **kwargs)
        corpus_field = self.fields["corpus"]
        assert isinstance(corpus_field, forms.ChoiceField)
        known = corpora_known()
        corpus_field.choices = [("", "(none: upload a file)"), *((c.path, c.label) for c in known)]
        if known:
            corpus_field.initial = known[0].path

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not cleaned.get("corpus") and not cleaned.get("corpus_file"):
            self.add_error("corpus", "choose a corpus on the server or upload one")
        kind = cleaned.get("kind")
        if kind == ModelKind.BERT_RUBER and not cleaned.get("cells") and "cells" not in self.errors:
            self.add_error("cells", "tick at least one cell to train")
        if kind == ModelKind.MAUDE and not cleaned.get("variants") and "variants" not in self.errors:
            self.add_error("variants", "tick at least one variant to train")
        return cleaned

    def parameters(self) -> dict[str, Any]:
        """The job's parameters: only those of the chosen kind (the cells' boxes are posted for every kind)."""
        kind = self.cleaned_data["kind"]
        parameters: dict[str, Any] = {
            key: self.cleaned_data[key] for key in ("epochs", "max_pairs") if self.cleaned_data.get(key)
        }
        if kind == ModelKind.BERT_RUBER:
            parameters["cells"] = list(self.cleaned_data["cells"])
        if kind == ModelKind.MAUDE:
            parameters["variants"] = list(self.cleaned_data["variants"])
        return parameters
