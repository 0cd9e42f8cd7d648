"""Score a study's responses with automatic metrics, in a Celery worker (default) or in this process (--sync).

    manage.py score_study "My study" --metrics bleu-1,bleu-2 --references multi
    manage.py score_study "My study" --metrics all --sync
    manage.py score_study "My study" --metrics ruber-referenced,ruber-unreferenced,ruber-gmean --model dd-ruber
    manage.py score_study "My study" --metrics bleu-1,bleu-2,bleu-4 --references single --tokenizer none --sync
    manage.py score_study "My study" --judge g-eval --judge single-answer --judge-model smollm2-135m

--judge TEMPLATE scores every question of the study (or --judge-question NAME) with an LLM judge asking that
prompt template, on a local model (--judge-backend local, the default) or an operator's endpoint
(--judge-backend server --judge-model NAME); its metrics are llm-judge:<key> (the score) and
llm-judge-mass:<key> (the probability on valid labels). --judge pairwise, on a study with the pairwise task,
asks the study's pairwise question of each of its pairs of replies, in both orders: one verdict per pair
(llm-pairwise:<key>; docs/metrics.md, "The pairwise judge").

--tokenizer none splits text on whitespace only (no lowercasing, no re-splitting; signature tok:none), for
data that is already tokenized; the default is the study language's tokenizer (en-v1, zh-jieba).

--implementation chooses the tool that computes the word-overlap and embedding baselines, as the paper one
compares with did (signature impl:): nltk (the default), nlg-eval (pycocoevalcap: BLEU, METEOR 1.5, ROUGE-L
beta 1.2, CIDEr-D, nlg-eval's embedding metrics: the dialog literature's tables), sacrebleu (BLEU, chrF,
chrF++) or rouge-score; or per family: --implementation bleu=sacrebleu,meteor=nlg-eval. --option KEY=VALUE
sets one of their parameters (repeatable): tok=intl, smooth=floor, eff=no, case=lc (sacrebleu), stem=yes
(rouge-score), oov=mean (embedding metrics). --vectors NAME scores the embedding metrics with registered word
vectors (`manage.py list_vectors`).

    manage.py score_study "My study" --metrics bleu-4,meteor,rouge-l --implementation nlg-eval --references single

Learned metrics (RUBER, BERT-RUBER) use the trained model named by --model (repeat it for one model of
each kind), else the study's chosen model, else the default model of that kind (`manage.py list_models`).

Without --sync the run is queued for a worker and this command follows its progress until it finishes;
an identical run already pending or running is followed instead of starting a second one. Only replies
without a score of the run's signatures are computed unless --recompute is given. Progress counts scores
(reply x metric); the summary says how many, e.g. "600 scores: 300 replies x 2 metrics", counting the metrics
asked for, and apart the raw components a blend is stored with ("+ 300 replies x 1 blend component"). Log
lines are written above the progress bar, not into it. Exits non-zero with the run's error when the run fails or is cancelled
(`manage.py cancel_scoring_run RUN`).
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from annotation.models import Study
from annotation.selectors.studies import StudyLookupError, study_by_name_or_id
from scoring.judges.definitions import JudgeRequest, JudgeRequestError, judge_metric_names
from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, BACKENDS
from scoring.metrics.llm_judge.judging import READ_EXPECTATION, READS
from scoring.models import ReferencesMode, RunStatus, ScoringRun, TokenizerChoice
from scoring.selectors import scoring_run_get, scoring_run_progress, study_response_count
from scoring.services import ScoringRequestError, scoring_run_create, scoring_run_execute
from scoring.services.run_finish import scoring_run_score_counts
from scoring.torch_threads import threads_argument, torch_threads_configure, torch_threads_default


def add_judge_arguments(parser: Any, *, for_study: bool = True) -> None:
    """--judge TEMPLATE and its options, as score_study (and, without the study's questions, score_files)
    take them (docs/metrics.md, "LLM judges")."""
    parser.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="TEMPLATE",
        help="score with an LLM judge asking this prompt template (repeatable): g-eval, llm-eval, "
        "single-answer, or one of your own"
        + (
            "; one judge per question of the study; pairwise: one judge of the study's pairs of replies"
            if for_study
            else ""
        ),
    )
    parser.add_argument("--judge-backend", choices=BACKENDS, default=BACKEND_LOCAL)
    parser.add_argument(
        "--judge-model",
        default="",
        help="a local model (local backend) or an endpoint (server backend) the operator configured "
        "(default: the only one there is)",
    )
    if for_study:
        parser.add_argument(
            "--judge-question",
            action="append",
            default=[],
            help="the study's question a judge rates (repeatable; default: every question)",
        )
    parser.add_argument("--judge-read", choices=READS, default=READ_EXPECTATION)


def judge_metrics(study: Study, options: dict[str, Any]) -> list[str]:
    """The metric names of the judges the command line asks for."""
    requests = [
        JudgeRequest(
            template=template,
            backend=options["judge_backend"],
            model=options["judge_model"],
            questions=tuple(options["judge_question"]),
            read=options["judge_read"],
        )
        for template in options["judge"]
    ]
    return judge_metric_names(study=study, requests=requests, user=None) if requests else []


def add_implementation_arguments(parser: Any) -> None:
    """--implementation, --option KEY=VALUE and --vectors, as score_study and score_files take them."""
    parser.add_argument(
        "--implementation",
        default="",
        help="nltk (default), nlg-eval, sacrebleu, rouge-score, or per family: bleu=sacrebleu,meteor=nlg-eval",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        dest="implementation_options",
        metavar="KEY=VALUE",
        help="a parameter of the chosen implementation (repeatable), e.g. tok=intl, stem=yes, oov=mean",
    )
    parser.add_argument("--vectors", default="", help="registered word vectors for the embedding metrics")


def key_values(pairs: list[str], *, flag: str) -> dict[str, str]:
    """``["tok=intl", "stem=yes"]`` as a dict; a CommandError naming ``flag`` for a pair without '='."""
    parsed: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise CommandError(f"{flag} {pair!r}: write KEY=VALUE, e.g. {flag} tok=intl")
        parsed[key.strip()] = value.strip()
    return parsed


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("study", help="the study's name (or its id)")
        parser.add_argument(
            "--metrics", default="", help="comma-separated names from `manage.py list_metrics`, or 'all'"
        )
        add_judge_arguments(parser)
        parser.add_argument("--references", choices=ReferencesMode.values, default=ReferencesMode.MULTI)
        parser.add_argument(
            "--tokenizer",
            choices=TokenizerChoice.values,
            default=TokenizerChoice.DEFAULT,
            help="'default': the study language's tokenizer (en-v1, zh-jieba); 'none': split on whitespace "
            "only, for pre-tokenized text (signature tok:none). Learned metrics keep their model's tokenizer",
        )
        add_implementation_arguments(parser)
        parser.add_argument(
            "--model",
            action="append",
            default=[],
            dest="models",
            help="a trained model for the learned metrics (repeatable: one per kind); see list_models",
        )
        parser.add_argument("--sync", action="store_true", help="compute here instead of in a Celery worker")
        parser.add_argument(
            "--recompute", action="store_true", help="score every reply again, not only those without a score"
        )
        parser.add_argument(
            "--threads",
            type=threads_argument,
            help="with --sync: torch CPU threads (default: DIALEVAL_TORCH_THREADS, else the cores this process "
            "may use)",
        )
        parser.add_argument("--poll", type=float, default=1.0, help="seconds between progress checks")
        parser.add_argument(
            "--timeout",
            type=float,
            default=0.0,
            help="stop waiting after this many seconds (0: wait until the run ends); the run itself goes on",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = self._study(options["study"])
        try:
            metrics = [name for name in options["metrics"].split(",") if name] + judge_metrics(study, options)
            run = scoring_run_create(
                study=study,
                metrics=metrics,
                references=options["references"],
                enqueue=not options["sync"],
                models=options["models"],
                tokenizer=options["tokenizer"],
                recompute=options["recompute"],
                implementation=options["implementation"],
                options=key_values(options["implementation_options"], flag="--option"),
                vectors=options["vectors"],
            )
        except (ScoringRequestError, JudgeRequestError) as error:
            raise CommandError(str(error)) from None
        replies = study_response_count(study=study)
        if run.was_existing:
            self.stdout.write(
                f"an identical run is already {run.get_status_display()}: following run {run.pk}"
            )
        self.stdout.write(
            f"run {run.pk}: {', '.join(run.metrics)} on {replies} responses "
            f"of {study.name!r} ({run.references} references)"
        )
        if run.tokenizer != TokenizerChoice.DEFAULT:
            self.stdout.write(f"  tokenizer: {run.get_tokenizer_display()}")
        if run.implementations:
            used = sorted(set(run.implementations.values()))
            self.stdout.write(
                f"  implementation: {', '.join(used)}"
                + (f" ({run.implementation})" if "=" in run.implementation else "")
            )
        if run.options:
            self.stdout.write(
                f"  options: {', '.join(f'{key}={value}' for key, value in run.options.items())}"
            )
        if run.vectors:
            self.stdout.write(f"  word vectors: {run.vectors}")
        for kind, model in run.trained_models.items():
            self.stdout.write(f"  {kind} model: {model['name']} ({str(model['hash'])[:12]})")
        started = time.monotonic()
        if options["sync"]:
            threads = torch_threads_configure(options["threads"] or torch_threads_default())
            self.stdout.write(f"  torch threads: {threads}")
        run = self._execute(run) if options["sync"] else self._wait(run, options["poll"], options["timeout"])
        if run.status == RunStatus.FAILED:
            raise CommandError(f"run {run.pk} failed: {run.error}")
        if run.status == RunStatus.CANCELLED:
            raise CommandError(f"run {run.pk} was cancelled: {run.notes}")
        if run.status != RunStatus.SUCCEEDED:  # --sync beside live workers that hold some chunks
            raise CommandError(
                f"run {run.pk} is still {run.get_status_display()}: workers hold its other chunks"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"run {run.pk} succeeded: {_scores_summary(run, asked=metrics)} "
                f"in {time.monotonic() - started:.1f} s"
            )
        )
        if run.notes:  # e.g. responses without references
            self.stdout.write(self.style.WARNING(f"warning: {run.notes}"))

    def _study(self, name_or_id: str) -> Study:
        try:
            return study_by_name_or_id(name_or_id)
        except StudyLookupError as error:
            raise CommandError(str(error)) from None

    def _execute(self, run: ScoringRun) -> ScoringRun:
        with (
            logging_redirect_tqdm(),
            tqdm(total=run.progress_total, unit="score", desc=f"run {run.pk}") as bar,
        ):

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            return scoring_run_execute(run_id=run.pk, progress=progress)

    def _wait(self, run: ScoringRun, poll: float, timeout: float) -> ScoringRun:
        started = time.monotonic()
        with (
            logging_redirect_tqdm(),
            tqdm(total=run.progress_total, unit="score", desc=f"run {run.pk}") as bar,
        ):
            while True:
                run = scoring_run_get(run_id=run.pk)
                state = scoring_run_progress(run=run)
                bar.total = state.total
                bar.update(state.done - bar.n)
                bar.set_postfix_str(run.get_status_display())
                if run.is_finished:
                    return run
                if timeout and time.monotonic() - started > timeout:
                    raise CommandError(
                        f"run {run.pk} is still {run.get_status_display()!r} after {timeout:.0f} s; it goes "
                        "on without this command (is a worker running? "
                        "`celery -A config.celery_app worker -Q cpu`)"
                    )
                time.sleep(poll)


def _scores_summary(run: ScoringRun, *, asked: list[str]) -> str:
    """The counts of the summary line, e.g. "600 scores: 300 replies x 2 metrics": replies x metrics (groups
    joined by "+" where metrics scored different numbers of replies, e.g. some already had their scores or
    lack a reference, and systems x metrics for system-level ones), never replies x chunks. The metrics are
    those ``asked`` for; the raw components a blend is stored with are counted apart (asking for
    2 metrics said "x 3 metrics")."""
    groups = scoring_run_score_counts(run_id=run.pk)
    if not groups:
        return "0 scores (nothing left to compute)"
    wanted = {name.strip() for name in asked}
    parts = []
    for group in groups:
        named = [name for name in group.metrics if "all" in wanted or name in wanted]
        components = [name for name in group.metrics if name not in named]
        if named:
            parts.append(f"{_plural(group.items, group.unit)} x {_plural(len(named), 'metric')}")
        if components:
            what = "blend component" if len(components) == 1 else "blend components"
            parts.append(
                f"{_plural(group.items, group.unit)} x {len(components)} {what} ({', '.join(components)})"
            )
    return f"{_plural(run.progress_total, 'score')}: {' + '.join(parts)}"


def _plural(count: int, noun: str) -> str:
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"
