"""The study page's form that starts a training job."""

from __future__ import annotations

from typing import Any

from django import forms

from scoring.metrics.bert_ruber.cells import FAST_CELLS
from scoring.metrics.learned_specs import FACTORIAL_CELLS
from scoring.metrics.maude.variants import ALL_VARIANTS, DEFAULT_VARIANTS
from scoring.metrics.ruber.corpus import DAILYDIALOG
from scoring.models import ModelKind
from scoring.services.training_jobs import GENERIC_FORMAT, MAX_EPOCHS, corpora_known


class TrainingJobForm(forms.Form):
    """Train a learned metric's model from the study page: kind, name, corpus (one the server
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
