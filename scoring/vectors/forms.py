"""The upload form of the word vectors page."""

from __future__ import annotations

from django import forms

from annotation.models import Language
from scoring.metrics.vector_files import AUTO_FORMAT
from scoring.models import VectorsFormat

FORMAT_FORM_CHOICES = [(AUTO_FORMAT, "detect it from the first line"), *VectorsFormat.choices]


class WordVectorsUploadForm(forms.Form):
    name = forms.SlugField(
        max_length=80,
        help_text="how runs will name them: letters, digits, '-' and '_' (e.g. glove-840b-300d)",
    )
    format = forms.ChoiceField(choices=FORMAT_FORM_CHOICES, initial=AUTO_FORMAT)
    language = forms.ChoiceField(
        choices=Language.choices, initial=Language.ENGLISH, help_text="the language of the vocabulary"
    )
    file = forms.FileField(help_text="word2vec binary, word2vec text or GloVe text")
