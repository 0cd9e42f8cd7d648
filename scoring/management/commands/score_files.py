"""Score a file of replies against reference files, without a study (the sacrebleu habit).

    manage.py score_files --hyp sys.txt --ref ref1.txt [--ref ref2.txt] [--context ctx.txt] \\
        --metrics bleu-4,meteor,rouge-l --implementation nlg-eval [--format table|json|csv]

One reply per line; each --ref file gives one reference per reply on the same line (an empty line: no
reference from that file); --context gives the dialog context of each reply, turns separated by tabs or by
DailyDialog's __eou__, oldest first (learned metrics read it; RUBER and BERT-RUBER the last turn). Prints
each metric's corpus-level value (the implementation's corpus statistic where it has one: corpus BLEU-4,
chrF; else the mean of the sentence values) with its signature, then the sentence-level values (table);
json gives everything as one object; csv one line per value (level, line, metric, value, signature).

--implementation, --option and --vectors as for score_study; learned metrics use --model NAME (repeatable),
else the default model of their kind. Nothing is stored.

--judge TEMPLATE scores the replies with an LLM judge asking --judge-question-text on the scale --judge-scale
(default 1-5, with --judge-labels for the points' words), in context (--context), with --judge-backend,
--judge-model and --judge-read as for score_study; its metrics are llm-judge:<key> and llm-judge-mass:<key>.
The judge's definition and an endpoint's answers are kept (a second call asks the server nothing twice).

    manage.py score_files --hyp sys.txt --context ctx.txt --judge g-eval --judge-scale 1-5

CIDEr-D's document frequencies: without --context every line is a document, as pycocoevalcap counts a file
(signature ``df:lines``); with --context, lines that answer one context (the same last turn and references)
count once, as in a study (``df:contexts``); ``--option df=...`` chooses either.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.scales import scale_problem
from scoring.judges.definitions import JudgeRequest, JudgeRequestError, file_judge_metric_names
from scoring.management.commands.score_study import (
    add_implementation_arguments,
    add_judge_arguments,
    key_values,
)
from scoring.metrics.llm_judge.prompts import JudgeQuestion
from scoring.metrics.llm_judge.scale import JudgeScale
from scoring.metrics.tokenize import SUPPORTED_LANGUAGES, TOKENIZERS
from scoring.services.file_scoring import FileScores, FileScoringError, TextFile, files_score


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--hyp", required=True, help="the replies, one per line")
        parser.add_argument(
            "--ref", action="append", default=[], help="a reference file, one per reply (repeatable)"
        )
        parser.add_argument(
            "--context", default="", help="the contexts, one per line (turns: tab or __eou__)"
        )
        parser.add_argument("--metrics", default="", help="comma-separated names (manage.py list_metrics)")
        add_implementation_arguments(parser)
        add_judge_arguments(parser, for_study=False)
        parser.add_argument("--judge-question", default="appropriateness", help="the judged quality's name")
        parser.add_argument(
            "--judge-question-text",
            default="How appropriate is the reply to the dialog context?",
            help="what the judge is asked",
        )
        parser.add_argument("--judge-scale", default="1-5", help="MIN-MAX: the scale's integer points")
        parser.add_argument(
            "--judge-labels", default="", help="the points' words, comma-separated, low to high"
        )
        parser.add_argument("--tokenizer", choices=TOKENIZERS, default="default")
        parser.add_argument("--language", choices=SUPPORTED_LANGUAGES, default="en")
        parser.add_argument(
            "--model", action="append", default=[], dest="models", help="a trained model by name"
        )
        parser.add_argument("--format", choices=("table", "json", "csv"), default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            metrics = [name for name in options["metrics"].split(",") if name] + _judges(options)
            scores = files_score(
                hypotheses=_read(options["hyp"]),
                references=[_read(path) for path in options["ref"]],
                contexts=_read(options["context"]) if options["context"] else None,
                metrics=metrics,
                implementation=options["implementation"],
                options=key_values(options["implementation_options"], flag="--option"),
                tokenizer=options["tokenizer"],
                language=options["language"],
                models=options["models"],
                vectors=options["vectors"],
            )
        except (FileScoringError, JudgeRequestError) as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(scores.as_dict(), indent=2, ensure_ascii=False, allow_nan=False))
        elif options["format"] == "csv":
            self._csv(scores)
        else:
            self._table(scores)
        for note in scores.notes:
            self.stderr.write(f"note: {note}")

    def _table(self, scores: FileScores) -> None:
        names = list(scores.corpus)
        width = max(len(name) for name in names)
        self.stdout.write(f"{'metric':<{width}}  {'corpus':>9}  {'n':>6}  statistic / signature")
        for name in names:
            entry = scores.corpus[name]
            value = "n/a" if entry["value"] is None else f"{entry['value']:.4f}"
            self.stdout.write(f"{name:<{width}}  {value:>9}  {entry['n']:>6}  {entry['statistic']}")
            self.stdout.write(f"{'':<{width}}  {'':>9}  {'':>6}  {entry['signature']}")
            if scores.signatures.get(name) and scores.signatures[name] != entry["signature"]:
                self.stdout.write(f"{'':<{width}}  {'':>9}  {'':>6}  sentences: {scores.signatures[name]}")
        if not scores.sentences:
            return
        self.stdout.write("")
        columns = list(scores.sentences)
        self.stdout.write("\t".join(["line", *columns]))
        for index in range(scores.lines):
            cells = [_short(scores.sentences[name][index]) for name in columns]
            self.stdout.write("\t".join([str(index + 1), *cells]))

    def _csv(self, scores: FileScores) -> None:
        writer = csv.writer(self.stdout, lineterminator="\n")
        writer.writerow(["level", "line", "metric", "value", "signature"])
        for name, entry in scores.corpus.items():
            writer.writerow(["corpus", "", name, _cell(entry["value"]), entry["signature"]])
        for name, values in scores.sentences.items():
            for index, value in enumerate(values):
                writer.writerow(["sentence", index + 1, name, _cell(value), scores.signatures[name]])


def _judges(options: dict[str, Any]) -> list[str]:
    """The metric names of the judges --judge asks for, on the question the --judge-* options describe."""
    if not options["judge"]:
        return []
    low, separator, high = options["judge_scale"].partition("-")
    if not separator or not low.strip().lstrip("-").isdigit() or not high.strip().isdigit():
        raise JudgeRequestError(f"--judge-scale: {options['judge_scale']!r} is not MIN-MAX, e.g. 1-5")
    words = tuple(word.strip() for word in options["judge_labels"].split(",") if word.strip())
    problem = scale_problem(int(low), int(high), "ordinal", words)
    if problem:
        raise JudgeRequestError(f"--judge-scale / --judge-labels: {problem}")
    question = JudgeQuestion(
        options["judge_question"], options["judge_question_text"], JudgeScale(int(low), int(high), words)
    )
    names: list[str] = []
    for template in options["judge"]:
        request = JudgeRequest(
            template=template,
            backend=options["judge_backend"],
            model=options["judge_model"],
            read=options["judge_read"],
        )
        names += file_judge_metric_names(request=request, question=question)
    return names


def _cell(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _short(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.6f}"


def _read(path: str) -> TextFile:
    if path == "-":
        return TextFile(name="standard input", data=sys.stdin.buffer.read())
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file")
    return TextFile(name=path, data=file.read_bytes())
