"""Signatures of scores computed by a chosen implementation: they name the tool (``impl:``), its
version and every parameter that changes the value; two implementations of one metric never share one; and
migration ``scoring/0009_run_implementations`` rewrote the signatures stored before implementations existed
into exactly what a run writes today, so that new runs find and reuse those rows.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.models import Study
from scoring.metrics import METRICS_VERSION
from scoring.metrics.registry import (
    available_metric_names,
    metric_spec,
    options_for,
    signature_parameters,
    system_metric_spec,
)
from scoring.metrics.signature import (
    PROJECT_IMPLEMENTATION,
    metric_signature,
    parse_metric_signature,
    signature_implementation,
)
from scoring.models import MetricScore, MetricSignature, RunStatus
from scoring.services import scoring_run_create, scoring_run_execute
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

SACREBLEU = importlib.metadata.version("sacrebleu")
ROUGE_SCORE = importlib.metadata.version("rouge-score")
NLTK = importlib.metadata.version("nltk")


def _parameters(name: str, references: str = "multi", **kwargs: object) -> dict[str, str]:
    return signature_parameters(name, language="en", references=references, **kwargs)  # type: ignore[arg-type]


# --- what each implementation's signature records -------------------------------------------------------------


def test_nltk_bleu_records_its_smoothing_the_project_tokenizer_and_the_case_it_compares() -> None:
    assert _parameters("bleu-4") == {
        "smooth": "method1",
        "refagg": "max",
        "refs": "multi",
        "impl": "nltk",
        "case": "lc",
        "tok": "en-v1",
        "version": METRICS_VERSION,
    }
    # on whitespace tokens the text is compared as written
    assert _parameters("bleu-4", tokenizer="none")["case"] == "mixed"
    assert _parameters("bleu-4", tokenizer="none")["tok"] == "none"
    assert _parameters("bleu-4", params={"smooth": "method3"})["smooth"] == "method3"


def test_nlg_eval_bleu_records_coco_s_floor_and_whitespace_tokens() -> None:
    parameters = _parameters("bleu-2", implementation="nlg-eval")
    assert parameters["impl"] == "nlg-eval"
    assert parameters["smooth"] == "coco-1e-15"
    assert (parameters["tok"], parameters["case"]) == ("split", "mixed")
    assert parameters["refagg"] == "joint"
    assert parameters["version"] == f"{METRICS_VERSION}+pycocoevalcap-1.2"
    # the run's tokenizer does not apply: nlg-eval tokenizes as it does
    assert _parameters("bleu-2", implementation="nlg-eval", tokenizer="none") == parameters


def test_sacrebleu_bleu_records_its_version_and_every_option() -> None:
    parameters = _parameters("bleu-3", implementation="sacrebleu")
    assert parameters["version"] == f"{METRICS_VERSION}+sacrebleu-{SACREBLEU}"
    assert {key: parameters[key] for key in ("tok", "smooth", "eff", "case")} == {
        "tok": "13a",
        "smooth": "exp",
        "eff": "yes",
        "case": "mixed",
    }
    chosen = _parameters(
        "bleu-3",
        implementation="sacrebleu",
        params={"tok": "intl", "smooth": "floor", "eff": "no", "case": "lc"},
    )
    assert {key: chosen[key] for key in ("tok", "smooth", "eff", "case")} == {
        "tok": "intl",
        "smooth": "floor",
        "eff": "no",
        "case": "lc",
    }
    with pytest.raises(ValueError, match="tok='moses' is not one of 13a, intl, zh, none, char"):
        _parameters("bleu-3", implementation="sacrebleu", params={"tok": "moses"})


def test_rouge_l_records_beta_per_implementation() -> None:
    assert _parameters("rouge-l")["beta"] == "1"
    coco = _parameters("rouge-l", implementation="nlg-eval")
    assert (coco["beta"], coco["refagg"], coco["tok"], coco["case"]) == ("1.2", "coco", "space", "mixed")
    google = _parameters("rouge-l", implementation="rouge-score", params={"stem": "yes"})
    assert (google["beta"], google["stem"], google["tok"], google["case"]) == (
        "1",
        "yes",
        "rouge-score",
        "lc",
    )
    assert google["version"] == f"{METRICS_VERSION}+rouge-score-{ROUGE_SCORE}"


def test_meteor_records_which_meteor() -> None:
    assert _parameters("meteor")["version"] == f"{METRICS_VERSION}+nltk-{NLTK}"
    meteor15 = _parameters("meteor", implementation="nlg-eval")
    assert meteor15["impl"] == "nlg-eval"
    assert meteor15["version"].startswith(
        f"{METRICS_VERSION}+meteor-1.5+jar."
    )  # the jar's and table's hashes
    assert "+paraphrase." in meteor15["version"]


def test_embedding_signatures_record_the_oov_rule_the_tokenizer_and_the_vectors() -> None:
    nltk = _parameters("greedy-matching")
    assert (nltk["oov"], nltk["tok"], nltk["case"]) == ("skip", "en-v1", "lc")
    assert nltk["artifact"] == metric_spec("greedy-matching").artifact_hash != ""
    nlg_eval = _parameters("greedy-matching", implementation="nlg-eval")
    assert (nlg_eval["oov"], nlg_eval["tok"], nlg_eval["case"]) == ("mean", "nltk-word", "mixed")
    assert _parameters("greedy-matching", params={"oov": "mean"})["oov"] == "mean"
    other = _parameters(
        "greedy-matching", params={"vectors": "glove-300d"}, artifact_hash="f" * 64, implementation="nlg-eval"
    )
    assert (other["vectors"], other["artifact"]) == ("glove-300d", "f" * 64)


def test_cider_d_chrf_and_corpus_metrics_name_their_only_or_chosen_tool() -> None:
    assert _parameters("cider-d")["impl"] == "nlg-eval"
    assert _parameters("cider-d")["sigma"] == "6"
    assert _parameters("chrf++")["impl"] == "sacrebleu"
    assert (_parameters("chrf++")["nw"], _parameters("chrf")["nw"]) == ("2", "0")
    corpus = system_metric_spec("corpus-bleu")
    default = corpus.signature_parameters(language="en", references="multi")
    assert (default["impl"], default["smooth"], default["tok"], default["case"]) == (
        "nltk",
        "method0",
        "en-v1",
        "lc",
    )
    chosen = corpus.signature_parameters(
        language="en", references="multi", implementation="sacrebleu", params={"tok": "intl"}
    )
    assert (chosen["impl"], chosen["tok"], chosen["version"]) == (
        "sacrebleu",
        "intl",
        f"{METRICS_VERSION}+sacrebleu-{SACREBLEU}",
    )
    coco = corpus.signature_parameters(language="en", references="multi", implementation="nlg-eval")
    assert (coco["impl"], coco["smooth"]) == ("nlg-eval", "coco-1e-15")


def test_one_reference_drops_the_aggregation_of_several_for_every_implementation() -> None:
    for name in available_metric_names():
        spec = metric_spec(name)
        for implementation, offered in spec.implementations.items():
            single = _parameters(name, references="single", implementation=implementation)
            multi = _parameters(name, references="multi", implementation=implementation)
            assert "refagg" not in single, (name, implementation)
            assert single["refs"] == "single"
            if "refagg" in offered.parameters:
                assert multi["refagg"] == offered.parameters["refagg"], (name, implementation)
            assert {key: value for key, value in multi.items() if key not in {"refagg", "refs"}} == {
                key: value for key, value in single.items() if key != "refs"
            }


def test_two_implementations_of_one_metric_have_two_signatures() -> None:
    checked = 0
    for name in available_metric_names():
        spec = metric_spec(name)
        texts = {
            metric_signature(name, _parameters(name, implementation=implementation))
            for implementation in spec.implementations
        }
        assert len(texts) == len(spec.implementations), name
        checked += len(spec.implementations) > 1
    assert checked >= 10  # BLEU-1..4, ROUGE-L (+P, R), METEOR, the three embedding metrics
    corpus = system_metric_spec("corpus-bleu")
    texts = {
        metric_signature(
            "corpus-bleu", corpus.signature_parameters(language="en", references="multi", implementation=i)
        )
        for i in corpus.implementations
    }
    assert len(texts) == 3


def test_an_option_reaches_only_the_signatures_of_implementations_that_take_it() -> None:
    """A run's options are set on the implementations that let a run set them; a metric that has a fixed
    parameter of the same name (nlg-eval's case:mixed) or no implementation at all (Self-BLEU's smoothing)
    keeps its own value, in its signature as in its computation."""
    options = {"case": "lc", "tok": "intl", "smooth": "floor"}
    assert options_for("bleu-4", "sacrebleu", options) == options
    for name in ("rouge-l", "cider-d", "embedding-average", "bleu-4"):
        applied = options_for(name, "nlg-eval", options)
        assert applied == {}, name
        parameters = _parameters(name, implementation="nlg-eval", params=applied)
        assert parameters == _parameters(name, implementation="nlg-eval"), name
    assert options_for("rouge-l", "rouge-score", options) == {}  # its tok and case are rouge-score's own
    assert options_for("self-bleu-2", "", options) == {}
    assert options_for("corpus-bleu", "sacrebleu", {**options, "eff": "no"}) == options
    assert options_for("corpus-bleu", "nlg-eval", options) == {}


# --- which implementation a stored signature names -----------------------------------------------------------


@pytest.mark.parametrize(
    ("parameters", "origin", "expected"),
    [
        ({"impl": "nltk", "refs": "multi"}, "builtin", "nltk"),
        ({"impl": "nlg-eval"}, "builtin", "nlg-eval"),
        ({"impl": "sacrebleu"}, "builtin", "sacrebleu"),
        ({"model": "abc", "refs": "multi"}, "builtin", PROJECT_IMPLEMENTATION),  # a learned metric
        ({"level": "system", "tok": "en-v1"}, "builtin", PROJECT_IMPLEMENTATION),  # Distinct-n
        ({"plugin": "dialeval-example-plugin@0.1.0"}, "plugin", "plugin:dialeval-example-plugin@0.1.0"),
        ({}, "plugin", "plugin"),
        ({"origin": "external", "sig": "BLEU,nrefs.1"}, "external", "external"),
        ({"origin": "external", "impl": "nltk"}, "external", "external"),  # imported: never the tool's own
    ],
)
def test_signature_implementation(parameters: dict[str, str], origin: str, expected: str) -> None:
    assert signature_implementation(parameters, origin) == expected
    assert MetricSignature(parameters=parameters, origin=origin).implementation == expected


# --- migration 0009: the signatures stored before implementations ------------------------------------------

BEFORE = ("scoring", "0008_word_vectors")
AFTER = ("scoring", "0009_run_implementations")


def _old(name: str, **parameters: str) -> str:
    return metric_signature(name, parameters)


def _embedding_hash() -> str:
    return metric_spec("embedding-average").artifact_hash


def _old_signatures() -> dict[str, tuple[str, dict[str, Any]]]:
    """label -> (old text, the signature_parameters call a run makes today for the same choices)."""
    v = METRICS_VERSION
    return {
        "bleu-2": (
            f"bleu-2|refagg:max|refs:multi|smooth:method1|tok:en-v1|version:{v}",
            {"references": "multi"},
        ),
        "bleu-4 single": (
            f"bleu-4|refs:single|smooth:method1|tok:en-v1|version:{v}",
            {"references": "single"},
        ),
        "bleu-2 tok:none": (
            f"bleu-2|refagg:max|refs:multi|smooth:method2|tok:none|version:{v}",
            {"references": "multi", "tokenizer": "none", "params": {"smooth": "method2"}},
        ),
        "rouge-l": (f"rouge-l|refagg:max|refs:multi|tok:en-v1|version:{v}", {"references": "multi"}),
        "meteor": (
            f"meteor|refs:single|tok:en-v1|version:{v}+nltk-{NLTK}",
            {"references": "single"},
        ),
        "embedding-average": (
            f"embedding-average|artifact:{_embedding_hash()}|refagg:max|refs:multi|tok:en-v1"
            f"|vectors:glove-6b-50d|version:{v}",
            {"references": "multi"},
        ),
    }


OLD_CORPUS_BLEU = "corpus-bleu|level:system|refs:multi|smooth:method0|tok:en-v1|version:1.0.0"
OLD_LEARNED = "ruber-referenced|model:abc123|refagg:max|refs:multi|tok:en-v1|version:1.0.0"
OLD_EXTERNAL = "bleu-2|origin:external|sig:BLEU,nrefs.1,tok.13a"


@pytest.mark.django_db(transaction=True)
def test_migration_0009_rewrites_old_builtin_signatures_as_runs_write_them_now_and_back() -> None:
    study = StudyFactory.create(language="en")
    untouched = StudyFactory.create(language="en")  # only scores whose signatures do not change
    system = SystemFactory.create(study=study, name="bot")
    context = DialogContextFactory.create(study=study)
    ReferenceFactory.create(context=context, text="i am fine , thank you .", origin="original")
    ReferenceFactory.create(context=context, text="fine , and you ?", origin="collected")
    response = ResponseFactory.create(context=context, system=system, text="i am fine , thanks .")
    other = ResponseFactory.create(
        context=DialogContextFactory.create(study=untouched), system=SystemFactory.create(study=untouched)
    )
    versions = dict(Study.objects.values_list("pk", "data_version"))

    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    try:
        old_apps = executor.loader.project_state([BEFORE]).apps
        OldSignature = old_apps.get_model("scoring", "MetricSignature")
        OldScore = old_apps.get_model("scoring", "MetricScore")
        OldSystemScore = old_apps.get_model("scoring", "SystemMetricScore")

        def old_row(text: str, origin: str = "builtin") -> int:
            name, parameters = parse_metric_signature(text)
            row = OldSignature.objects.create(
                text=text,
                name=name,
                parameters=parameters,
                version=parameters.get("version", ""),
                origin=origin,
            )
            return int(row.pk)

        rows = {label: old_row(text) for label, (text, _) in _old_signatures().items()}
        scores = {
            label: OldScore.objects.create(response_id=response.pk, signature_id=pk, value=0.123 + index).pk
            for index, (label, pk) in enumerate(rows.items())
        }
        corpus = old_row(OLD_CORPUS_BLEU)
        OldSystemScore.objects.create(system_id=system.pk, signature_id=corpus, value=0.2, items=1)
        learned = old_row(OLD_LEARNED)
        external = old_row(OLD_EXTERNAL, origin="external")
        OldScore.objects.create(response_id=other.pk, signature_id=learned, value=0.5)
        OldScore.objects.create(response_id=other.pk, signature_id=external, value=0.7)

        executor.loader.build_graph()
        executor.migrate([AFTER])

        for label, (_, call) in _old_signatures().items():
            row = MetricSignature.objects.get(pk=rows[label])
            expected = _parameters(row.name, **call)
            assert row.parameters == expected, label
            assert row.text == metric_signature(row.name, expected), label
            assert row.implementation == "nltk"
            score = MetricScore.objects.get(pk=scores[label])
            assert score.signature_id == rows[label]  # the scores keep their row: nothing to recompute
        corpus_row = MetricSignature.objects.get(pk=corpus)
        corpus_expected = system_metric_spec("corpus-bleu").signature_parameters(
            language="en", references="multi"
        )
        assert corpus_row.parameters == corpus_expected
        assert corpus_row.text == metric_signature("corpus-bleu", corpus_expected)
        assert MetricSignature.objects.get(pk=learned).text == OLD_LEARNED
        assert MetricSignature.objects.get(pk=external).text == OLD_EXTERNAL
        after = dict(Study.objects.values_list("pk", "data_version"))
        assert after[study.pk] == versions[study.pk] + 1  # no cached report shows the old texts
        assert after[untouched.pk] == versions[untouched.pk]

        # a run asking for the same work today finds those rows, and the stored scores count as done (the
        # runs of today's code need today's schema: the later migrations too)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
        run = scoring_run_create(study=study, metrics=["bleu-2"], references="multi", enqueue=False)
        run = scoring_run_execute(run_id=run.pk)
        assert run.status == RunStatus.SUCCEEDED, run.error
        assert run.signatures["bleu-2"] == rows["bleu-2"]
        assert MetricScore.objects.get(pk=scores["bleu-2"]).value == pytest.approx(0.123)
        assert (
            MetricSignature.objects.filter(name="bleu-2", origin="builtin").count() == 2
        )  # + the tok:none one

        # backwards: the old texts and parameters again
        executor.loader.build_graph()
        executor.migrate([BEFORE])
        old_apps = executor.loader.project_state([BEFORE]).apps
        OldSignature = old_apps.get_model("scoring", "MetricSignature")
        for label, (text, _) in _old_signatures().items():
            row = OldSignature.objects.get(pk=rows[label])
            assert row.text == text, label
            assert row.parameters == parse_metric_signature(text)[1], label
        assert OldSignature.objects.get(pk=corpus).text == OLD_CORPUS_BLEU
        assert OldSignature.objects.get(pk=learned).text == OLD_LEARNED
        assert OldSignature.objects.get(pk=external).text == OLD_EXTERNAL
    finally:
        call_command("migrate", verbosity=0)  # every app at its latest migration again, for the next tests
