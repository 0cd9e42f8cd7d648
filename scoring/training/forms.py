"""The study page's form that starts a training job: its kinds and each kind's name lists (BERT-RUBER's
cells, MaUde's variants) are the trainer registry's (:mod:`scoring.trainers`)."""

from __future__ import annotations

from typing import Any

from django import forms

from scoring.metrics.learned_specs import RUBER_KIND
from scoring.metrics.ruber.corpus import DAILYDIALOG
from scoring.services.training_jobs import GENERIC_FORMAT, MAX_EPOCHS, corpora_known
from scoring.trainers import NameList, kind_trainer, kind_trainers, model_kind_choices


class TrainingJobForm(forms.Form):
    """Train a learned metric's model from the study page: kind, name, corpus (one the server
    knows, or an upload), format, epochs, and the boxes of each kind's name lists (BERT-RUBER's cells, the
    fast ones ticked; MaUde's variants), added after the epochs from the trainer registry."""

    kind = forms.ChoiceField(choices=model_kind_choices, initial=RUBER_KIND)
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
    make_default = forms.BooleanField(
        required=False, label="Make it the default model of its kind (for studies that choose none)"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "train-%s")  # unique ids beside the run form on the same page
        super().__init__(*args, **kwargs)
        self._add_name_lists()
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
        for names in self._name_lists(cleaned.get("kind")):
            if not cleaned.get(names.key) and names.key not in self.errors:
                self.add_error(names.key, names.none_ticked)
        return cleaned

    def parameters(self) -> dict[str, Any]:
        """The job's parameters: only those of the chosen kind (every kind's boxes are posted)."""
        parameters: dict[str, Any] = {
            key: self.cleaned_data[key] for key in ("epochs", "max_pairs") if self.cleaned_data.get(key)
        }
        for names in self._name_lists(self.cleaned_data["kind"]):
            parameters[names.key] = list(self.cleaned_data[names.key])
        return parameters

    def _add_name_lists(self) -> None:
        """One box per name of each kind's name lists, placed before ``make_default``."""
        make_default = self.fields.pop("make_default")
        for trainer in kind_trainers():
            for names in trainer.name_lists:
                self.fields[names.key] = forms.MultipleChoiceField(
                    required=False,
                    choices=[(name, name) for name in names.choices],
                    initial=list(names.initial),
                    widget=forms.CheckboxSelectMultiple(attrs={"data-kind": trainer.kind}),
                    label=names.label,
                    help_text=names.help_text,
                )
        self.fields["make_default"] = make_default

    @staticmethod
    def _name_lists(kind: object) -> tuple[NameList, ...]:
        """The name lists of ``kind`` (none for an invalid kind, which the field reports)."""
        return (
            kind_trainer(kind).name_lists
            if isinstance(kind, str) and kind in dict(model_kind_choices())
            else ()
        )
