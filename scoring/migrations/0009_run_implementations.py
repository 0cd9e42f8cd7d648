"""A run's choice of implementations (issue 23), and ``impl``/``case`` (``beta``, ``oov``) written into the
signatures of the baselines computed before implementations could be chosen.

Those scores were computed by the default implementation, nltk's formulas; their signatures now say so
(``impl:nltk``), with the case the tokenizer compared text in (``case:lc`` after the project tokenizer,
``case:mixed`` with ``tok:none``), ROUGE-L's beta (``beta:1``) and the embedding metrics' rule for unknown
words (``oov:skip``), exactly as new runs write them. Only the text changes: every stored score keeps its
signature row, so nothing is recomputed. The studies with such scores get a new data version, so that no
cached report shows the old text.
"""

from django.db import migrations, models
from django.db.models import F

_IMPLEMENTED = {
    "bleu-1": {},
    "bleu-2": {},
    "bleu-3": {},
    "bleu-4": {},
    "rouge-l": {"beta": "1"},
    "meteor": {},
    "embedding-average": {"oov": "skip"},
    "vector-extrema": {"oov": "skip"},
    "greedy-matching": {"oov": "skip"},
    "corpus-bleu": {},
}


def _text(name, parameters):
    """The signature string (scoring.metrics.signature.metric_signature, as of this migration)."""
    keys = sorted(parameters, key=lambda key: (key == "version", key))
    return "|".join([name, *(f"{key}:{parameters[key]}" for key in keys)])


def _rewrite(apps, schema_editor, *, forward):
    MetricSignature = apps.get_model("scoring", "MetricSignature")
    MetricScore = apps.get_model("scoring", "MetricScore")
    SystemMetricScore = apps.get_model("scoring", "SystemMetricScore")
    Study = apps.get_model("annotation", "Study")
    changed = []
    for signature in MetricSignature.objects.filter(origin="builtin", name__in=list(_IMPLEMENTED)):
        parameters = dict(signature.parameters)
        if forward:
            if "impl" in parameters:
                continue
            parameters["impl"] = "nltk"
            parameters["case"] = "mixed" if parameters.get("tok") == "none" else "lc"
            parameters.update(_IMPLEMENTED[signature.name])
        else:
            if parameters.get("impl") != "nltk":
                continue
            for key in ("impl", "case", *_IMPLEMENTED[signature.name]):
                parameters.pop(key, None)
        text = _text(signature.name, parameters)
        if MetricSignature.objects.filter(text=text).exclude(pk=signature.pk).exists():
            continue  # the rewritten text exists already (cannot happen forward); keep both as they are
        signature.parameters = parameters
        signature.text = text
        signature.save(update_fields=["parameters", "text"])
        changed.append(signature.pk)
    if not changed:
        return
    studies = set(
        MetricScore.objects.filter(signature_id__in=changed).values_list("response__context__study_id", flat=True)
    ) | set(
        SystemMetricScore.objects.filter(signature_id__in=changed).values_list("system__study_id", flat=True)
    )
    Study.objects.filter(pk__in=studies).update(data_version=F("data_version") + 1)


def forwards(apps, schema_editor):
    _rewrite(apps, schema_editor, forward=True)


def backwards(apps, schema_editor):
    _rewrite(apps, schema_editor, forward=False)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_itemnote_pair_and_system"),
        ("scoring", "0008_word_vectors"),
    ]

    operations = [
        migrations.AddField(
            model_name="scoringrun",
            name="implementation",
            field=models.CharField(
                blank=True,
                default="",
                help_text="the tools that compute the baselines (issue 23): '' each metric's default (nltk), one "
                "name (nlg-eval, sacrebleu, rouge-score) or per family (bleu=sacrebleu,meteor=nlg-eval)",
                max_length=200,
            ),
        ),
        migrations.AddField(
            model_name="scoringrun",
            name="implementations",
            field=models.JSONField(
                blank=True, default=dict, help_text="the implementation each metric was computed with: {metric: name}"
            ),
        ),
        migrations.AddField(
            model_name="scoringrun",
            name="options",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="parameters of the chosen implementations, e.g. {tok: intl, smooth: floor, stem: yes, oov: mean}",
            ),
        ),
        migrations.AddField(
            model_name="scoringrun",
            name="vectors",
            field=models.CharField(
                blank=True,
                default="",
                help_text="the registered word vectors the embedding metrics use ('' : GloVe 6B 50d)",
                max_length=100,
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
