"""System-level metrics (Gupta et al., 2019, sections 3.2.2 and 5.2): Distinct-n, Self-BLEU, recall (eq. 2) and corpus
BLEU, in the metric core and through a scoring run (one stored value per system)."""

from __future__ import annotations

import pytest

from scoring.metrics.registry import compute_system_metric, system_metric_spec
from scoring.metrics.system_specs import ContextOutputs
from scoring.metrics.tokenize import tokenize
from scoring.models import MetricSignature, RunStatus, SystemMetricScore
from scoring.services import scoring_run_create, scoring_run_execute
from tests.correlation.report_helpers import report_page
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.scoring.metric_batches import DIALOG_SAMPLE, MetricBatch
from tests.scoring.metric_tester import SystemMetricTester
from tests.scoring.reference_metrics import (
    nltk_corpus_bleu_reference,
    nltk_recall_bleu_reference,
    nltk_self_bleu_reference,
)

CONTEXTS = [
    ContextOutputs(
        outputs=["i am fine , thanks .", "i am good , thank you .", "not bad at all ."],
        references=["i am fine .", "pretty good , thanks ."],
    ),
    ContextOutputs(outputs=["see you tomorrow .", "see you ."], references=["bye , see you tomorrow !"]),
]
BATCH = MetricBatch.of_contexts(CONTEXTS)
TOLERANCE = 1e-12  # nltk and the project's BLEU agree to the last bits on these few short replies


def tokens(text: str) -> list[str]:
    return tokenize(text, "en")


def test_distinct_counts_ngrams_over_all_outputs_of_the_system() -> None:
    outputs = [tokens(text) for context in CONTEXTS for text in context.outputs]
    bigrams = [tuple(t[i : i + 2]) for t in outputs for i in range(len(t) - 1)]
    score = compute_system_metric("distinct-2", CONTEXTS, "en")
    assert score.value == pytest.approx(len(set(bigrams)) / len(bigrams))
    assert score.items == 5


def test_self_bleu_equals_nltk_against_the_other_outputs() -> None:
    SystemMetricTester("self-bleu-2", nltk_self_bleu_reference(2), TOLERANCE).check(BATCH)
    # a system with one output per context has no Self-BLEU
    assert compute_system_metric("self-bleu-2", [ContextOutputs(["hello ."])], "en").value is None


def test_recall_is_the_mean_over_references_of_the_best_output() -> None:
    SystemMetricTester("recall-bleu-2", nltk_recall_bleu_reference(2), TOLERANCE).check(BATCH)
    assert compute_system_metric("recall-bleu-2", CONTEXTS, "en").items == 2


def test_corpus_bleu_equals_nltk_corpus_bleu() -> None:
    tester = SystemMetricTester("corpus-bleu", nltk_corpus_bleu_reference(), TOLERANCE)
    tester.check(BATCH)
    # BATCH shares no 4-gram with its references (BLEU-4 about 1e-77 without smoothing), nor does the dialog
    # sample's "chatty": its "echo" and "terse" are the check that a wrong value is seen
    values = tester.check(DIALOG_SAMPLE)
    assert min(values["echo"] or 0.0, values["terse"] or 0.0) > 0.1, values


# Pre-tokenized outputs on which a whitespace split and the English tokenizer disagree (case, "2:00").
PRE_TOKENIZED = [
    ContextOutputs(
        outputs=["see you at 2:00 then .", "See you at 2 : 00 .", "OK , see you ."],
        references=["see you at 2:00 then .", "OK .", "ok , SEE YOU ."],
    ),
    ContextOutputs(outputs=["Fine , thanks .", "fine , thanks !"], references=["Fine , thank you ."]),
]


@pytest.mark.parametrize(
    "name",
    ["distinct-1", "distinct-2", "distinct-3", "self-bleu-2", "self-bleu-4", "recall-bleu-2",
     "recall-vector-extrema", "corpus-bleu"],
)  # fmt: skip
def test_tokenizer_none_reaches_every_system_metric(name: str) -> None:
    whitespace = compute_system_metric(name, PRE_TOKENIZED, "en", tokenizer="none").value
    default = compute_system_metric(name, PRE_TOKENIZED, "en").value
    assert whitespace is not None
    assert default is not None
    assert whitespace != pytest.approx(default, abs=1e-6)


def test_tokenizer_none_uses_whitespace_tokens() -> None:
    outputs = [text.split() for context in PRE_TOKENIZED for text in context.outputs]
    unigrams = [token for output in outputs for token in output]
    score = compute_system_metric("distinct-1", PRE_TOKENIZED, "en", tokenizer="none")
    assert score.value == pytest.approx(len(set(unigrams)) / len(unigrams))
    reference = nltk_corpus_bleu_reference(tokenizer="none")
    tester = SystemMetricTester("corpus-bleu", reference, TOLERANCE, tokenizer="none")
    tester.check(MetricBatch.of_contexts(PRE_TOKENIZED))


def test_system_signature_records_the_tokenizer() -> None:
    spec = system_metric_spec("corpus-bleu")
    default = spec.signature_parameters(language="en", references="multi")
    assert default == {
        "smooth": "method0",
        "refs": "multi",
        "impl": "nltk",
        "tok": "en-v1",
        "case": "lc",
        "level": "system",
        "version": "1.0.0",
    }
    assert spec.signature_parameters(language="en", references="multi", tokenizer="none") == {
        **default,
        "tok": "none",
        "case": "mixed",
    }
    with pytest.raises(ValueError, match="unknown tokenizer 'ws'"):
        compute_system_metric("distinct-1", CONTEXTS, "en", tokenizer="ws")


def test_unknown_parameter_is_refused() -> None:
    with pytest.raises(ValueError, match="has no parameter"):
        compute_system_metric("distinct-1", CONTEXTS, "en", {"smooth": "method2"})


@pytest.mark.django_db
def test_a_run_stores_one_value_per_system_from_its_samples() -> None:
    study = StudyFactory.create()
    sampler = SystemFactory.create(study=study, name="sampler")
    single = SystemFactory.create(study=study, name="single")
    for position, context_outputs in enumerate(CONTEXTS):
        context = DialogContextFactory.create(study=study, position=position)
        for text in context_outputs.references:
            ReferenceFactory.create(context=context, text=text, origin="collected")
        for index, text in enumerate(context_outputs.outputs):
            ResponseFactory.create(context=context, system=sampler, text=text, sample_index=index)
        ResponseFactory.create(context=context, system=single, text=context_outputs.outputs[0])

    run = scoring_run_create(
        study=study, metrics=["bleu-2", "distinct-2", "self-bleu-2", "recall-bleu-2"], enqueue=False
    )
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    # scores: 7 replies x bleu-2, then 2 systems x the 3 system-level metrics
    assert run.progress_done == run.progress_total == 7 + 2 * 3
    # the real cause, not a guess ("e.g. no word with a vector, one output")
    assert (
        "self-bleu-2 has no value for 1 system(s): no context has two or more replies of the system"
        in run.notes
    )
    assert "no word with a vector" not in run.notes

    stored = {
        (score.system.name, score.signature.name): score.value
        for score in SystemMetricScore.objects.select_related("system", "signature")
    }
    assert stored[("sampler", "self-bleu-2")] == pytest.approx(
        compute_system_metric("self-bleu-2", CONTEXTS, "en").value
    )
    assert stored[("sampler", "recall-bleu-2")] == pytest.approx(
        compute_system_metric("recall-bleu-2", CONTEXTS, "en").value
    )
    assert ("single", "self-bleu-2") not in stored
    assert ("single", "distinct-2") in stored
    signature = MetricSignature.objects.get(name="recall-bleu-2")
    assert signature.text.startswith("recall-bleu-2|")
    assert {"level:system", "refs:multi", "smooth:method1", "version:1.0.0"} <= set(signature.text.split("|"))
    # running again replaces the values rather than adding rows
    scoring_run_execute(run_id=scoring_run_create(study=study, metrics=["distinct-2"], enqueue=False).pk)
    assert SystemMetricScore.objects.filter(signature__name="distinct-2").count() == 2


@pytest.mark.django_db
def test_the_report_page_shows_system_level_metrics_escaped(client) -> None:
    study = StudyFactory.create()
    system = SystemFactory.create(study=study, name="<b>bot</b>")
    for position, context_outputs in enumerate(CONTEXTS):
        context = DialogContextFactory.create(study=study, position=position)
        for index, text in enumerate(context_outputs.outputs):
            ResponseFactory.create(context=context, system=system, text=text, sample_index=index)
    scoring_run_execute(run_id=scoring_run_create(study=study, metrics=["distinct-1"], enqueue=False).pk)
    client.force_login(study.owner)
    page = report_page(client, f"/reports/{study.pk}/").content.decode()
    assert 'id="system-metric-table"' in page
    assert "&lt;b&gt;bot&lt;/b&gt;" in page
    assert "<b>bot</b>" not in page  # json_script escapes "<" too
    value = SystemMetricScore.objects.get().value
    assert f"{value:.4f}" in page
