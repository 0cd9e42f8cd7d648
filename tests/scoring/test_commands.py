"""manage.py list_metrics and manage.py score_study --sync."""

from __future__ import annotations

import logging
import re
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from scoring.metrics import registry
from scoring.metrics.registry import available_metric_names, available_system_metric_names, metric_spec
from scoring.metrics.spec import MetricSpec
from scoring.models import MetricScore, MetricSignature, RunStatus, ScoringRun
from tests.factories import DialogContextFactory, ReferenceFactory, ResponseFactory, StudyFactory


def run_command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_list_metrics_prints_one_name_per_line() -> None:
    names = run_command("list_metrics").splitlines()
    assert names == available_metric_names() + available_system_metric_names()
    assert {"distinct-2", "self-bleu-4", "recall-bleu-2", "corpus-bleu"} <= set(names)


def test_list_metrics_verbose_says_what_each_metric_needs() -> None:
    lines = run_command("list_metrics", "--verbose").splitlines()
    assert len(lines) == len(available_metric_names()) + len(available_system_metric_names())
    name, needs, model, description, implementations = lines[1].split("\t")
    assert implementations == "implementations: nltk, nlg-eval, sacrebleu"
    assert name == "bleu-2"
    assert needs == "needs references"
    assert model == "no training"
    assert "BLEU-2" in description
    by_name = {line.split("\t")[0]: line.split("\t") for line in lines}
    assert by_name["ruber-unreferenced"][1:3] == ["reference-free", "needs a trained ruber model"]
    assert by_name["bert-ruber-gmean"][1:3] == ["needs references", "needs a trained bert-ruber model"]


@pytest.fixture
def study(db):
    study = StudyFactory.create(name="command study")
    for index, text in enumerate(["i am fine , thanks .", "no idea", "sure"]):
        context = DialogContextFactory.create(study=study)
        ReferenceFactory.create(context=context, text="i am fine , thanks .", origin="original")
        ResponseFactory.create(context=context, text=text, system__name=f"system {index}")
    return study


def test_score_study_sync_computes_and_reports(study) -> None:
    output = run_command("score_study", "command study", "--metrics", "bleu-1,bleu-2", "--sync")

    run = ScoringRun.objects.get(study=study)
    assert run.status == RunStatus.SUCCEEDED
    assert run.metrics == ["bleu-1", "bleu-2"]
    assert run.references == "multi"
    assert MetricScore.objects.filter(response__context__study=study).count() == 6
    assert f"run {run.pk}: bleu-1, bleu-2 on 3 responses of 'command study' (multi references)" in output
    assert f"run {run.pk} succeeded: 6 scores: 3 replies x 2 metrics in " in output


def test_score_study_writes_log_lines_above_its_progress_bar_not_into_it(study, capfd) -> None:
    """the run's INFO log lines ("scoring run 1 planned ...") landed inside the tqdm bar."""
    # As in a terminal, the log's console handler and the bar write to the same stderr (under pytest the
    # handler kept the stream of the session's own capture).
    [console] = [h for h in logging.root.handlers if type(h) is logging.StreamHandler]
    previous = console.setStream(sys.stderr)
    try:
        call_command("score_study", "command study", "--metrics", "bleu-1", "--sync", stdout=StringIO())
    finally:
        console.setStream(previous)
    err = capfd.readouterr().err
    logged = [match.start() for match in re.finditer(r"\d{4}-\d\d-\d\d \S+ INFO scoring", err)]
    assert logged  # the planning and the end of the run
    assert all(start == 0 or err[start - 1] in "\r\n" for start in logged)  # the bar was cleared first


def test_score_study_summary_counts_replies_and_metrics_not_chunks(study, settings) -> None:
    settings.DIALEVAL_SCORING_CHUNK_SIZE = 2  # two chunks per family: still 3 replies, not 2 + 1 of each
    ResponseFactory.create(context=DialogContextFactory.create(study=study), text="no reference here")
    output = run_command(
        "score_study", "command study", "--metrics", "bleu-1,bleu-2,rouge-l,distinct-1", "--sync"
    )
    run = ScoringRun.objects.get(study=study)
    # the reference-based metrics skip the reply without a reference; distinct-1 scores each of 4 systems
    assert f"run {run.pk} succeeded: 13 scores: 3 replies x 3 metrics + 4 systems x 1 metric in " in output
    assert run.progress_total == 13

    output = run_command("score_study", "command study", "--metrics", "bleu-1", "--sync")  # all scored
    latest = ScoringRun.objects.filter(study=study).latest("pk")
    assert f"run {latest.pk} succeeded: 0 scores (nothing left to compute) in " in output


def test_score_study_all_metrics_single_reference_by_id(study) -> None:
    run_command("score_study", str(study.pk), "--metrics", "all", "--references", "single", "--sync")
    run = ScoringRun.objects.get(study=study)
    # "all" without a trained model: every metric that needs no model, and no variant (factorial cell);
    # of the baselines, those the default implementation (nltk) has: not nlg-eval's CIDEr-D, not chrF
    nltk_or_one_way = [
        name
        for name in available_metric_names()
        if not metric_spec(name).implementations or "nltk" in metric_spec(name).implementations
    ]
    untrained = [name for name in nltk_or_one_way if not metric_spec(name).model_kind]
    untrained += [
        name for name in available_system_metric_names() if name not in ("corpus-chrf", "corpus-chrf++")
    ]
    assert run.metrics == untrained
    assert "bleu-1" in run.metrics
    assert "cider-d" not in run.metrics
    assert "rouge-lsum" not in run.metrics
    assert not any(":" in name for name in run.metrics)
    assert run.references == "single"
    assert run.status == RunStatus.SUCCEEDED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no such study", "--metrics", "bleu-1"], "no study with the name or id 'no such study'"),
        (["command study", "--metrics", "bleu-1,blue-2"], "unknown metric 'blue-2'; known metrics: bleu-1"),
        (["command study", "--metrics", ","], "choose at least one metric"),
    ],
)
def test_score_study_refuses_bad_requests(study, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run_command("score_study", *args, "--sync")
    assert not ScoringRun.objects.exists()


def test_score_study_tokenizer_none_is_recorded_on_the_run_and_in_signatures(study) -> None:
    output = run_command(
        "score_study", "command study", "--metrics", "bleu-1,distinct-1", "--tokenizer", "none", "--sync"
    )
    run = ScoringRun.objects.get(study=study)
    assert run.status == RunStatus.SUCCEEDED
    assert run.tokenizer == "none"
    assert "  tokenizer: none: whitespace split" in output
    texts = set(MetricSignature.objects.values_list("text", flat=True))
    assert len(texts) == 2
    assert all("|tok:none|" in text for text in texts), texts

    run_command("score_study", "command study", "--metrics", "bleu-1", "--sync")  # the default
    assert ScoringRun.objects.filter(study=study, tokenizer="default").count() == 1
    assert MetricSignature.objects.filter(name="bleu-1", text__contains="|tok:en-v1|").exists()


def test_score_study_refuses_an_unknown_tokenizer_listing_the_choices(study) -> None:
    with pytest.raises(CommandError, match=r"argument --tokenizer: invalid choice: 'en-13a'.*default.*none"):
        run_command("score_study", "command study", "--metrics", "bleu-1", "--tokenizer", "en-13a", "--sync")
    assert not ScoringRun.objects.exists()


def test_score_study_prints_warnings_of_a_succeeded_run(study) -> None:
    ResponseFactory.create(context=DialogContextFactory.create(study=study), text="no reference here")
    output = run_command("score_study", "command study", "--metrics", "bleu-1", "--sync")
    assert "warning: 1 response(s) have no reference" in output


def test_score_study_exits_with_the_error_of_a_failed_run(study, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(inputs, params):
        raise ValueError("the model is missing")

    spec = MetricSpec(
        name="broken-metric", description="test", needs_references=False, version="0", compute=broken
    )
    monkeypatch.setitem(registry._SPECS, spec.name, spec)
    expected = (
        r"run \d+ failed: ChunkComputeError: broken-metric failed on every reply of the chunk: ValueError"
    )
    with pytest.raises(CommandError, match=expected):
        run_command("score_study", "command study", "--metrics", "broken-metric", "--sync")
    assert ScoringRun.objects.get().status == RunStatus.FAILED
