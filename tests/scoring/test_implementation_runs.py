"""Scoring runs that choose implementations, on a real database: what a run records, which requests
are one run, what it refuses, what it stores (values equal the named tool's own, computed here), and how the
report, its CSV and its LaTeX table show two implementations of one metric.
"""

from __future__ import annotations

import csv
import io

import pytest

from annotation.models import Annotator, Rating, Response, Study
from correlation.report.cache import report_current
from correlation.report.exports import correlation_rows_as_csv
from scoring.metrics import registry
from scoring.models import MetricScore, MetricSignature, RunStatus, ScoringRun, SystemMetricScore
from scoring.services import ScoringRequestError, scoring_run_create, scoring_run_execute
from stats.latex import report_latex
from stats.report.document import report_document_from_json
from stats.report.types import ReportOptions
from tests.factories import (
    DialogContextFactory,
    QuestionFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.scoring.metric_batches import MetricBatch
from tests.scoring.metric_tester import assert_values_close
from tests.scoring.reference_metrics import (
    coco_bleu_reference,
    coco_cider_reference,
    coco_rouge_reference,
    rouge_scorer_reference,
    sacrebleu_bleu_reference,
    sacrebleu_corpus_bleu_reference,
)

pytestmark = pytest.mark.django_db

TOLERANCE = 1e-9
# context -> (last turn, references); every system answers every context
CONTEXTS = [
    ("how are you ?", ["i am fine , thank you .", "Fine, thanks. And you?"]),
    ("what is the weather like ?", ["the weather is lovely today", "it is raining"]),
    ("when shall we meet ?", ["OK, see you at the station at five."]),
    ("what do you want for dinner ?", ["how about pizza for dinner ?", "pasta , please"]),
]
REPLIES = {
    "echo": [
        "i am fine , thank you .",
        "the weather is nice today",
        "Let's meet at 5 pm.",
        "pizza for dinner ?",
    ],
    "terse": ["fine", "rain", "five", "I don't know, maybe pasta?"],
}
RATINGS = {"echo": [2, 2, 1, 2], "terse": [0, 1, 1, 0]}


def build_study() -> Study:
    study = StudyFactory.create(language="en")
    question = QuestionFactory.create(study=study)
    annotator = Annotator.objects.create(study=study, pseudonym="rater-0")
    systems = {name: SystemFactory.create(study=study, name=name) for name in REPLIES}
    for index, (turn, references) in enumerate(CONTEXTS):
        context = DialogContextFactory.create(
            study=study, position=index, turns=[{"speaker": "A", "text": turn}]
        )
        for position, text in enumerate(references):
            ReferenceFactory.create(
                context=context, text=text, origin="original" if position == 0 else "collected"
            )
        for name, system in systems.items():
            response = ResponseFactory.create(context=context, system=system, text=REPLIES[name][index])
            Rating.objects.create(
                annotator=annotator, response=response, question=question, value=RATINGS[name][index]
            )
    return study


def execute(run: ScoringRun) -> ScoringRun:
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    return run


def stored(study: Study, metric: str, *, implementation: str) -> dict[str, list[float]]:
    """system name -> the values of ``metric`` by ``implementation``, in context order."""
    rows = (
        MetricScore.objects.filter(
            response__context__study=study, signature__name=metric, signature__parameters__impl=implementation
        )
        .select_related("response__system")
        .order_by("response__context__position")
    )
    values: dict[str, list[float]] = {}
    for row in rows:
        values.setdefault(row.response.system.name, []).append(row.value)
    return values


def system_batch(system: str, *, single: bool = False) -> MetricBatch:
    """One system's replies, each with its context's references (the original alone where ``single``), as the
    reference implementations of tests/scoring/reference_metrics.py read them: nlg-eval run on this system's
    file is one "image" per context."""
    return MetricBatch.of(
        REPLIES[system],
        [refs[:1] if single else refs for _, refs in CONTEXTS],
        queries=[turn for turn, _ in CONTEXTS],
        systems=[system] * len(CONTEXTS),
    )


# --- creating a run ------------------------------------------------------------------------------------------


def test_all_under_nlg_eval_means_the_metrics_nlg_eval_has() -> None:
    study = build_study()
    run = scoring_run_create(study=study, metrics=["all"], implementation="nlg-eval", enqueue=False)
    assert run.implementation == "nlg-eval"
    assert {
        "cider-d",
        "bleu-4",
        "meteor",
        "rouge-l",
        "rouge-l-precision",
        "greedy-matching",
        "corpus-bleu",
    } <= set(run.metrics)
    assert not {"chrf", "chrf++", "rouge-lsum", "corpus-chrf"} & set(run.metrics)
    assert "distinct-2" in run.metrics  # computed one way only: in every "all"
    with_implementations = [
        name
        for name in run.metrics
        if (
            registry.metric_spec(name)
            if not registry.is_system_metric(name)
            else registry.system_metric_spec(name)
        ).implementations
    ]
    assert run.implementations == dict.fromkeys(with_implementations, "nlg-eval")
    # the default choice: nltk's metrics, CIDEr-D left out
    default = scoring_run_create(study=study, metrics=["all"], enqueue=False)
    assert "cider-d" not in default.metrics
    assert "bleu-4" in default.metrics
    assert default.implementations["bleu-4"] == "nltk"


def test_a_per_family_choice_is_stored_canonically_with_each_metrics_implementation() -> None:
    study = build_study()
    run = scoring_run_create(
        study=study,
        metrics=["bleu-4", "corpus-bleu", "meteor", "rouge-l", "distinct-1"],
        implementation=" meteor = nlg-eval , bleu=sacrebleu ",
        enqueue=False,
    )
    assert run.implementation == "bleu=sacrebleu,meteor=nlg-eval"
    assert run.implementations == {
        "bleu-4": "sacrebleu",
        "corpus-bleu": "sacrebleu",
        "meteor": "nlg-eval",
        "rouge-l": "nltk",
    }


def test_one_request_is_one_run_and_another_option_is_another_run() -> None:
    study = build_study()

    def create(implementation: str, options: dict[str, str] | None) -> ScoringRun:
        return scoring_run_create(
            study=study, metrics=["bleu-4"], implementation=implementation, options=options, enqueue=False
        )

    first = create("bleu=sacrebleu", {"tok": "intl"})
    assert first.options == {"tok": "intl"}
    same = create(" bleu = sacrebleu ", {"tok": "intl"})  # another spelling of the same request
    assert same.pk == first.pk
    assert getattr(same, "was_existing", False)
    everywhere = create("sacrebleu", {"tok": "intl"})  # for BLEU alone the same work, but another request
    assert everywhere.pk != first.pk
    other_option = create("bleu=sacrebleu", {"tok": "13a"})
    no_option = create("bleu=sacrebleu", None)
    other_tool = create("bleu=nlg-eval", None)
    runs = {first.pk, everywhere.pk, other_option.pk, no_option.pk, other_tool.pk}
    assert len(runs) == 5
    assert len(set(ScoringRun.objects.values_list("request_key", flat=True))) == 5
    # options are stored sorted, as text
    sorted_run = create("bleu=sacrebleu", {"smooth": "floor", "case": "lc", "eff": "no"})
    assert list(sorted_run.options.items()) == [("case", "lc"), ("eff", "no"), ("smooth", "floor")]
    again = create("bleu=sacrebleu", {"eff": "no", "smooth": "floor", "case": "lc"})
    assert again.pk == sorted_run.pk


@pytest.mark.parametrize(
    ("metrics", "implementation", "options", "expected"),
    [
        (
            ["bleu-4"],
            "nlgeval",
            None,
            "implementation: unknown implementation 'nlgeval'; choose one of nltk, nlg-eval",
        ),
        (
            ["bleu-4", "chrf"],
            "nlg-eval",
            None,
            "implementation: chrf has no nlg-eval implementation (it has: sacrebleu)",
        ),
        (["cider-d"], "nltk", None, "implementation: cider-d has no nltk implementation (it has: nlg-eval)"),
        (
            ["bleu-4"],
            "blue=sacrebleu",
            None,
            "implementation: 'blue' is not a metric family with implementations",
        ),
        (
            ["bleu-4"],
            "",
            {"stem": "yes"},
            "option 'stem' applies to none of the chosen metrics' implementations",
        ),
        (["bleu-4"], "sacrebleu", {"tok": "moses"}, "option tok='moses' is not accepted by sacrebleu's bleu"),
    ],
)
def test_a_bad_choice_is_a_request_error_and_creates_nothing(
    metrics: list[str], implementation: str, options: dict[str, str] | None, expected: str
) -> None:
    study = build_study()
    with pytest.raises(ScoringRequestError) as raised:
        scoring_run_create(
            study=study, metrics=metrics, implementation=implementation, options=options, enqueue=False
        )
    assert str(raised.value).startswith(expected), str(raised.value)
    assert ScoringRun.objects.count() == 0
    assert MetricSignature.objects.count() == 0


# --- what a run stores ---------------------------------------------------------------------------------------


def test_an_nlg_eval_run_stores_pycocoevalcaps_values_under_impl_nlg_eval_signatures() -> None:
    study = build_study()
    run = execute(
        scoring_run_create(
            study=study, metrics=["bleu-4", "cider-d"], implementation="nlg-eval", enqueue=False
        )
    )
    for name in ("bleu-4", "cider-d"):
        signature = MetricSignature.objects.get(pk=run.signatures[name])
        assert signature.parameters["impl"] == "nlg-eval"
        assert "|impl:nlg-eval|" in signature.text
        assert signature.implementation == "nlg-eval"
    bleu = stored(study, "bleu-4", implementation="nlg-eval")
    cider = stored(study, "cider-d", implementation="nlg-eval")
    for system in REPLIES:
        batch = system_batch(system)
        assert_values_close(bleu[system], coco_bleu_reference(4)(batch), TOLERANCE, system)
        # CIDEr-D over the whole study, each context once: nlg-eval run on this system's file
        assert_values_close(cider[system], coco_cider_reference()(batch), TOLERANCE, system)
    assert MetricScore.objects.filter(signature_id=run.signatures["cider-d"]).count() == 8


def test_cider_d_is_computed_over_the_whole_study_not_chunk_by_chunk(settings) -> None:
    settings.DIALEVAL_SCORING_CHUNK_SIZE = 1  # reply chunks of one: a chunk-wise CIDEr-D would differ
    study = build_study()
    execute(scoring_run_create(study=study, metrics=["cider-d"], enqueue=False))  # its only tool: nlg-eval
    cider = stored(study, "cider-d", implementation="nlg-eval")
    for system in REPLIES:
        assert_values_close(cider[system], coco_cider_reference()(system_batch(system)), TOLERANCE, system)


def test_a_sacrebleu_run_with_an_option_scores_and_signs_with_it() -> None:
    study = build_study()
    run = execute(
        scoring_run_create(
            study=study,
            metrics=["bleu-2", "bleu-4"],
            implementation="sacrebleu",
            options={"tok": "intl"},
            enqueue=False,
        )
    )
    assert run.options == {"tok": "intl"}
    for order in (2, 4):
        signature = MetricSignature.objects.get(pk=run.signatures[f"bleu-{order}"])
        assert (signature.parameters["impl"], signature.parameters["tok"]) == ("sacrebleu", "intl")
        reference = sacrebleu_bleu_reference(order, {"tok": "intl"})
        values = stored(study, f"bleu-{order}", implementation="sacrebleu")
        for system in REPLIES:
            assert_values_close(values[system], reference(system_batch(system)), TOLERANCE, system)


def test_an_option_for_one_family_leaves_the_others_as_their_tool_computes_them() -> None:
    study = build_study()
    run = execute(
        scoring_run_create(
            study=study,
            metrics=["bleu-4", "rouge-l"],
            implementation="*=nlg-eval,bleu=sacrebleu",
            options={"case": "lc"},
            enqueue=False,
        )
    )
    bleu = MetricSignature.objects.get(pk=run.signatures["bleu-4"])
    rouge = MetricSignature.objects.get(pk=run.signatures["rouge-l"])
    assert bleu.parameters["case"] == "lc"
    assert (rouge.parameters["impl"], rouge.parameters["case"]) == ("nlg-eval", "mixed")
    values = stored(study, "rouge-l", implementation="nlg-eval")
    for system in REPLIES:
        assert_values_close(values[system], coco_rouge_reference()(system_batch(system)), TOLERANCE, system)


def test_corpus_bleu_by_sacrebleu_is_stored_per_system() -> None:
    study = build_study()
    run = execute(
        scoring_run_create(
            study=study, metrics=["corpus-bleu"], implementation="bleu=sacrebleu", enqueue=False
        )
    )
    signature = MetricSignature.objects.get(pk=run.signatures["corpus-bleu"])
    assert (signature.parameters["impl"], signature.parameters["level"]) == ("sacrebleu", "system")
    scores = {
        score.system.name: score
        for score in SystemMetricScore.objects.filter(signature=signature).select_related("system")
    }
    assert set(scores) == set(REPLIES)
    for system in REPLIES:
        # sacrebleu's reference streams: the contexts with one reference are padded with None (sacrebleu's
        # own way of giving an item fewer references)
        theirs = sacrebleu_corpus_bleu_reference()(system_batch(system).contexts_of(system))
        assert_values_close([scores[system].value], [theirs], TOLERANCE, system)
        assert scores[system].items == len(CONTEXTS)


# --- the report ----------------------------------------------------------------------------------------------


def test_two_implementations_of_one_metric_are_two_rows_of_the_report_csv_and_latex(
    django_capture_on_commit_callbacks,
) -> None:
    study = build_study()
    for implementation in ("nltk", "nlg-eval"):
        run = scoring_run_create(
            study=study, metrics=["bleu-4", "rouge-l"], implementation=implementation, enqueue=False
        )
        with django_capture_on_commit_callbacks(execute=True):  # the data version moves: a new report
            execute(run)
    study.refresh_from_db()
    document = report_document_from_json(
        report_current(study=study, options=ReportOptions(resamples=0)).document
    )
    rows = [row for row in document["rows"] if row["metric"] == "bleu-4"]
    assert sorted(row["implementation"] for row in rows) == ["nlg-eval", "nltk"]
    for row in rows:
        assert f"|impl:{row['implementation']}|" in row["signature"]
    assert {row["implementation"] for row in document["rows"]} == {"nltk", "nlg-eval"}

    # the CSV has an implementation column, one line per signature
    lines = list(csv.DictReader(io.StringIO(correlation_rows_as_csv(document["rows"]))))
    assert sorted(line["implementation"] for line in lines if line["metric"] == "bleu-4") == [
        "nlg-eval",
        "nltk",
    ]
    assert all(f"|impl:{line['implementation']}|" in line["signature"] for line in lines)

    # the LaTeX table says whose number each row is, and its caption which tool computed what
    latex = report_latex(document, study_name="implementations")
    assert "BLEU-4 (nltk)" in latex
    assert "BLEU-4 (nlg-eval)" in latex
    assert "Computed with nltk's formulas: " in latex
    assert "nlg-eval (pycocoevalcap; METEOR 1.5): " in latex
    caption = next(line for line in latex.splitlines() if line.startswith(r"\caption{"))
    assert "Computed with" in caption


def test_one_implementation_per_metric_adds_no_label() -> None:
    study = build_study()
    execute(scoring_run_create(study=study, metrics=["bleu-4"], implementation="nlg-eval", enqueue=False))
    study.refresh_from_db()
    document = report_document_from_json(
        report_current(study=study, options=ReportOptions(resamples=0)).document
    )
    latex = report_latex(document, study_name="one tool")
    assert "BLEU-4 (nlg-eval)" not in latex
    assert "BLEU-4" in latex
    assert "Computed with nlg-eval (pycocoevalcap; METEOR 1.5): BLEU-4" in latex


# --- the references curve (per-reference scores) ------------------------------------------------------------


def test_scores_of_another_tool_are_recomputed_per_reference_by_that_tool() -> None:
    from scoring.reference_scores import per_reference_read, recomputable_reason
    from scoring.services.report_scores import report_scores_request

    study = build_study()
    run = execute(
        scoring_run_create(
            study=study,
            metrics=["rouge-l", "greedy-matching"],
            implementation="rouge=rouge-score,embedding=nlg-eval",
            options={"stem": "yes"},
            enqueue=False,
        )
    )
    responses = list(Response.objects.filter(context__study=study).select_related("context").order_by("pk"))
    rouge_score = rouge_scorer_reference("rougeL", "fmeasure", stem=True)
    for name in ("rouge-l", "greedy-matching"):
        signature = MetricSignature.objects.get(pk=run.signatures[name])
        assert recomputable_reason(signature=signature, language="en") == ""
        replies = [response.pk for response in responses]
        report_run = report_scores_request(study=study, curve_signatures=[signature], response_ids=replies)
        assert report_run is not None
        assert scoring_run_execute(run_id=report_run.pk).status == RunStatus.SUCCEEDED
        per_reference = per_reference_read(study=study, signature=signature, response_ids=replies)
        stored_values = dict(
            MetricScore.objects.filter(signature=signature).values_list("response_id", "value")
        )
        for response in responses:
            values = per_reference.scores[response.pk]
            references = sorted(response.context.references.all(), key=lambda reference: reference.pk)
            assert len(values) == len(references)
            # the best reference's score is the stored multi-reference score (Gupta et al. (2019) eq. 1)
            assert max(values) == pytest.approx(stored_values[response.pk], abs=TOLERANCE), name
            if name == "rouge-l":  # each one is rouge-score's own, with the stemmer the run chose
                texts = [reference.text for reference in references]
                one_each = MetricBatch.of([response.text] * len(texts), [[text] for text in texts])
                assert_values_close(list(values), rouge_score(one_each), TOLERANCE, response.text)


# --- score_study ---------------------------------------------------------------------------------------------


def test_score_study_takes_an_implementation_and_options() -> None:
    from io import StringIO

    from django.core.management import CommandError, call_command

    study = build_study()
    out = StringIO()
    call_command(
        "score_study", study.name, "--metrics", "bleu-4,rouge-l", "--implementation", "bleu=sacrebleu",
        "--option", "tok=intl", "--references", "single", "--sync", stdout=out,
    )  # fmt: skip
    run = ScoringRun.objects.get()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert (run.implementation, run.options) == ("bleu=sacrebleu", {"tok": "intl"})
    assert "implementation: nltk, sacrebleu (bleu=sacrebleu)" in out.getvalue()
    assert "options: tok=intl" in out.getvalue()
    reference = sacrebleu_bleu_reference(4, {"tok": "intl"})
    values = stored(study, "bleu-4", implementation="sacrebleu")
    for system in REPLIES:
        assert_values_close(values[system], reference(system_batch(system, single=True)), TOLERANCE, system)
    with pytest.raises(CommandError, match=r"^implementation: cider-d has no nltk implementation"):
        call_command("score_study", study.name, "--metrics", "cider-d", "--implementation", "nltk", "--sync")
    with pytest.raises(CommandError, match=r"^--option 'tok:intl': write KEY=VALUE"):
        call_command("score_study", study.name, "--metrics", "bleu-4", "--option", "tok:intl", "--sync")
    assert ScoringRun.objects.count() == 1
