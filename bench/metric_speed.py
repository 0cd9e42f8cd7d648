"""The word-overlap metrics against the reference libraries, measured honestly.

Each comparison pits the project's metric, as a scoring run computes it (``compute_metrics`` from raw text:
tokenizing included), against a peer library on the same pairs, in one process:

    bleu-4            vs nltk ``sentence_bleu`` (BLEU-4, smoothing method1)
    bleu-4            vs sacrebleu ``BLEU.sentence_score`` (BLEU-4; tokenize="none", smooth_method="floor",
                         smooth_value=0.1, effective_order=True: the settings closest to nltk's method1)
    bleu-1..4 (one call) vs nltk ``sentence_bleu`` once per order
    rouge-l           vs rouge-score ``RougeScorer(["rougeL"])`` (F-measure)
    meteor            vs nltk ``meteor_score`` (the same WordNet reader object)

Same tokens: the peers get the project's ``en-v1`` tokens, made before any timing and never timed: nltk as
token lists, sacrebleu and rouge-score as those tokens joined by spaces and split again by their own
whitespace tokenizer (inside their timed call). So the project's time includes its tokenizer and the
peers' does not: the ratios are if anything unfavourable to the project. rouge-score's default tokenizer
drops punctuation and would give different numbers, hence the whitespace one ("equal given the same
tokens").

Warm-up: every implementation runs once on all pairs before timing (imports, WordNet's load, sacrebleu's and
nltk's own caches). nltk's METEOR keeps what its WordNet reader parsed in the warm-up (the synsets it met);
the project's METEOR caches Porter stems, WordNet synonyms and synset lemma names per process, and they are
emptied before each of its timed calls, so every project METEOR time is a fresh run that fills them: if
anything, unfavourable to the project.

Rounds: ``--rounds`` (default 5) rounds, each timing every comparison once per side, the sides alternating
which goes first (A B, then B A); each call is timed with ``time.process_time()`` (CPU) and
``time.perf_counter()`` (wall) after a ``gc.collect()``. Printed per comparison: the median seconds of each
side, min / median / max over rounds of the ratio peer / project (how many times faster the project is),
in CPU and in wall time, the target and whether the median CPU ratio meets it, and the largest absolute
difference between the two sides' values over all pairs (for sacrebleu also over the pairs whose
hypothesis has at least 4 tokens: below that, its effective order and nltk's method1 differ by
definition). Progress is reported between rounds only (tqdm on stderr, monitor thread off).

Pairs: --pairs (default 10,000) DailyDialog (query, reference, another pair's reply) items from --data
(default ../shared/data/dailydialog, as bench.dailydialog_pairs builds them), one reference each; without
that folder, a seeded sample of generated English sentences, and the output says so.

    .venv/bin/python -m bench.metric_speed [--rounds 5] [--pairs 10000] [--data ../shared/data/dailydialog]
        [--only bleu4-nltk,bleu4-sacrebleu,bleu1-4-nltk,rougel-rouge-score,meteor-nltk]

It takes about three minutes with the defaults on a 2-core machine (nltk's METEOR is most of it). Run it on
a quiet machine: the load averages at the start and the end are printed with the figures.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import logging
import os
import platform
import random
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# METEOR's WordNet, built by scripts/setup.sh; nltk reads NLTK_DATA when it is first imported.
os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))

from bench.dailydialog_pairs import DEFAULT_DAILYDIALOG, benchmark_pairs
from scoring.metrics.meteor import MetricDataMissingError, load_wordnet, meteor_caches_clear
from scoring.metrics.registry import compute_metrics
from scoring.metrics.tokenize import tokenize

DEFAULT_PAIRS = 10_000
DEFAULT_ROUNDS = 5
SEED = 0
BLEU_ORDERS = ["bleu-1", "bleu-2", "bleu-3", "bleu-4"]

Values = list[tuple[float, ...]]  # per pair, one value per metric (BLEU-1..4: four)


@dataclass(frozen=True)
class Pairs:
    hypotheses: list[str]
    references: list[list[str]]  # exactly one reference per pair
    queries: list[str]
    description: str


@dataclass
class Comparison:
    key: str
    project: str
    peer: str
    target: float | None  # peer / project CPU ratio the issue asks for, at least
    run_project: Callable[[], Values]
    run_peer: Callable[[], Values]
    before_project: Callable[[], None] | None = None  # untimed, before every project call
    short_hypothesis_note: bool = False  # sacrebleu: agreement also over hypotheses of >= 4 tokens
    cpu: dict[str, list[float]] = field(default_factory=lambda: {"project": [], "peer": []})
    wall: dict[str, list[float]] = field(default_factory=lambda: {"project": [], "peer": []})
    values: dict[str, Values] = field(default_factory=dict)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help="interleaved rounds (>= 5 to report)"
    )
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS)
    parser.add_argument("--data", type=Path, default=DEFAULT_DAILYDIALOG)
    parser.add_argument("--only", default="", help="comma-separated comparison keys (default: all)")
    args = parser.parse_args()
    if args.rounds < 1 or args.pairs < 2:
        parser.error("--rounds must be at least 1 and --pairs at least 2")

    load_start = os.getloadavg()
    pairs = load_pairs(args.data, args.pairs)
    hyp_tokens = [tokenize(text) for text in pairs.hypotheses]
    ref_tokens = [tokenize(refs[0]) for refs in pairs.references]
    comparisons = build_comparisons(pairs, hyp_tokens, ref_tokens)
    comparisons = only_comparisons(parser, comparisons, args.only)

    print(f"# Word-overlap metrics against reference libraries, {len(pairs.hypotheses):,} pairs")
    print(f"command: python -m bench.metric_speed {shlex.join(sys.argv[1:])}".rstrip())
    print(f"pairs: {pairs.description}")
    print_machine(load_start)
    if args.rounds < DEFAULT_ROUNDS:
        print(
            f"NOTE: {args.rounds} round(s), fewer than {DEFAULT_ROUNDS}: a sanity check, not figures to report"
        )

    for comparison in comparisons:  # warm-up: one untimed call of each side, whose values are compared
        if comparison.before_project:
            comparison.before_project()
        comparison.values["project"] = comparison.run_project()
        comparison.values["peer"] = comparison.run_peer()
    run_rounds(comparisons, args.rounds)

    print()
    print_table(comparisons, len(pairs.hypotheses), [len(tokens) >= 4 for tokens in hyp_tokens])
    end = os.getloadavg()
    print(f"\nload average at end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")


def load_pairs(data: Path, count: int) -> Pairs:
    """DailyDialog pairs when the corpus is there, else a seeded sample of generated sentences."""
    if (data / "test" / "dialogues_test.txt").is_file():
        found = benchmark_pairs(data, count=count)
        return Pairs(
            found.hypotheses,
            [[refs[0]] for refs in found.references],
            found.queries,
            f"DailyDialog ({data}): {found.description}",
        )
    return generated_pairs(count)


_WORD_LIST = (
    "i you we they it he she the a an this that what where when why how yes no not do does did is are was "
    "were be been have has had can could will would should may might must go going went come came get got "
    "make made take took see saw know knew think thought want need like love good great fine nice bad big "
    "small car auto film movie house home work job money time day night week year today tomorrow friend "
    "family doctor teacher student restaurant food dinner lunch coffee tea water train bus ticket station "
    "city street shop buy bought pay price cheap expensive happy glad sorry thanks thank please help call "
    "phone talk say said tell told ask answer question problem idea really very too much many some any all"
)
_WORDS = _WORD_LIST.split()
_ENDINGS = (".", "?", "!", " .", " ?", ", please .")


def generated_pairs(count: int, seed: int = SEED) -> Pairs:
    """``count`` pairs of generated English sentences (seeded): used only when DailyDialog is absent."""
    rng = random.Random(seed)

    def sentence() -> str:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 20))]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), ",")
        return " ".join(words).capitalize() + rng.choice(_ENDINGS)

    references = [sentence() for _ in range(count)]
    order = list(range(count))
    rng.shuffle(order)
    return Pairs(
        hypotheses=[references[order[i]] if order[i] != i else sentence() for i in range(count)],
        references=[[reference] for reference in references],
        queries=[sentence() for _ in range(count)],
        description=f"GENERATED sample ({count:,} pairs of random English sentences, seed {seed}): the "
        "DailyDialog corpus was not found",
    )


def build_comparisons(
    pairs: Pairs, hyp_tokens: list[list[str]], ref_tokens: list[list[str]]
) -> list[Comparison]:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    smooth = SmoothingFunction().method1
    references = [[tokens] for tokens in ref_tokens]
    hyp_texts = [" ".join(tokens) for tokens in hyp_tokens]
    ref_texts = [" ".join(tokens) for tokens in ref_tokens]
    sacre = BLEU(tokenize="none", smooth_method="floor", smooth_value=0.1, effective_order=True)
    rouge = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_WhitespaceTokenizer())
    try:
        wordnet = load_wordnet()
    except MetricDataMissingError as error:
        wordnet = None
        print(f"meteor-nltk left out: {error}", file=sys.stderr)

    def project(names: Sequence[str]) -> Callable[[], Values]:
        def run() -> Values:
            scores = compute_metrics(names, pairs.hypotheses, pairs.references, pairs.queries, "en")
            return [
                tuple(float(scores[name][i] or 0.0) for name in names) for i in range(len(pairs.hypotheses))
            ]

        return run

    def nltk_bleu(orders: Sequence[int]) -> Callable[[], Values]:
        weights = [(1.0 / order,) * order for order in orders]
        return lambda: [
            tuple(float(sentence_bleu(refs, hyp, weights=w, smoothing_function=smooth)) for w in weights)
            for hyp, refs in zip(hyp_tokens, references, strict=True)
        ]

    comparisons = [
        Comparison(
            "bleu4-nltk",
            "bleu-4",
            "nltk sentence_bleu, BLEU-4, method1",
            3.0,
            project(["bleu-4"]),
            nltk_bleu([4]),
        ),
        Comparison(
            "bleu4-sacrebleu",
            "bleu-4",
            "sacrebleu sentence_score, BLEU-4 (floor 0.1, effective order, tokenize none)",
            2.0,
            project(["bleu-4"]),
            lambda: [
                (sacre.sentence_score(hyp, [ref]).score / 100,)
                for hyp, ref in zip(hyp_texts, ref_texts, strict=True)
            ],
            short_hypothesis_note=True,
        ),
        Comparison(
            "bleu1-4-nltk",
            "bleu-1..4 in one call",
            "nltk sentence_bleu, once per order 1..4, method1",
            None,
            project(BLEU_ORDERS),
            nltk_bleu([1, 2, 3, 4]),
        ),
        Comparison(
            "rougel-rouge-score",
            "rouge-l",
            "rouge-score RougeScorer(rougeL) F-measure, whitespace tokenizer",
            3.0,
            project(["rouge-l"]),
            lambda: [
                (rouge.score(ref, hyp)["rougeL"].fmeasure,)
                for hyp, ref in zip(hyp_texts, ref_texts, strict=True)
            ],
        ),
        Comparison(
            "meteor-nltk",
            "meteor (its caches emptied before each call)",
            "nltk meteor_score, the same WordNet reader (its synsets parsed in the warm-up)",
            2.0,
            project(["meteor"]),
            lambda: [
                (float(meteor_score(refs, hyp, wordnet=wordnet)),)
                for hyp, refs in zip(hyp_tokens, references, strict=True)
            ],
            before_project=meteor_caches_clear,
        ),
    ]
    return [
        comparison for comparison in comparisons if wordnet is not None or comparison.key != "meteor-nltk"
    ]


class _WhitespaceTokenizer:
    """rouge-score's tokenizer interface over text that is already tokenized."""

    def tokenize(self, text: str) -> list[str]:
        return text.split()


def only_comparisons(parser: argparse.ArgumentParser, comparisons: list[Any], only: str) -> list[Any]:
    """The comparisons ``--only`` names (comma-separated keys; all when empty); a parser error for an
    unknown key, listing the known ones."""
    if not only:
        return comparisons
    wanted = {key.strip() for key in only.split(",") if key.strip()}
    unknown = wanted - {comparison.key for comparison in comparisons}
    if unknown:
        known = ", ".join(comparison.key for comparison in comparisons)
        parser.error(f"--only: unknown comparison(s) {', '.join(sorted(unknown))}; known: {known}")
    return [comparison for comparison in comparisons if comparison.key in wanted]


def timed(call: Callable[[], Values], before: Callable[[], None] | None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call; ``before`` and a garbage collection run untimed first."""
    if before is not None:
        before()
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    call()
    return time.process_time() - cpu, time.perf_counter() - wall


def run_rounds(comparisons: list[Comparison], rounds: int) -> None:
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: process_time() counts every thread of the process
    with tqdm(total=rounds, unit="round", file=sys.stderr) as bar:
        for number in range(rounds):
            for comparison in comparisons:
                sides = ["project", "peer"] if number % 2 == 0 else ["peer", "project"]
                for side in sides:
                    if side == "project":
                        cpu, wall = timed(comparison.run_project, comparison.before_project)
                    else:
                        cpu, wall = timed(comparison.run_peer, None)
                    comparison.cpu[side].append(cpu)
                    comparison.wall[side].append(wall)
            bar.update(1)  # between rounds only


def spread(values: Sequence[float]) -> str:
    return " / ".join(f"{value:.2f}" for value in (min(values), statistics.median(values), max(values)))


def largest_difference(ours: Values, theirs: Values, keep: Sequence[bool] | None = None) -> float:
    gaps = [
        abs(a - b)
        for index, (row_a, row_b) in enumerate(zip(ours, theirs, strict=True))
        if keep is None or keep[index]
        for a, b in zip(row_a, row_b, strict=True)
    ]
    return max(gaps, default=0.0)


def print_table(comparisons: list[Comparison], n: int, keep: Sequence[bool]) -> None:
    """The markdown table; ``keep`` marks the pairs whose hypothesis has at least 4 tokens."""
    print(
        "| project | peer | project CPU s | peer CPU s | project wall s | peer wall s "
        "| peer/project CPU (min / median / max) | peer/project wall (min / median / max) | target (CPU) "
        "| max abs difference |"
    )
    print("|---|---|---:|---:|---:|---:|---|---|---|---|")
    for comparison in comparisons:
        cpu_ratios = [p / o for p, o in zip(comparison.cpu["peer"], comparison.cpu["project"], strict=True)]
        wall_ratios = [
            p / o for p, o in zip(comparison.wall["peer"], comparison.wall["project"], strict=True)
        ]
        median = statistics.median(cpu_ratios)
        target = "—"
        if comparison.target is not None:
            target = f">= {comparison.target:.0f}x: {'met' if median >= comparison.target else 'NOT met'}"
        ours, theirs = comparison.values["project"], comparison.values["peer"]
        difference = f"{largest_difference(ours, theirs):.1e}"
        if comparison.short_hypothesis_note:
            difference += f" (hypotheses of >= 4 tokens: {largest_difference(ours, theirs, keep):.1e})"
        print(
            f"| {comparison.project} | {comparison.peer} "
            f"| {statistics.median(comparison.cpu['project']):.3f} | {statistics.median(comparison.cpu['peer']):.3f} "
            f"| {statistics.median(comparison.wall['project']):.3f} "
            f"| {statistics.median(comparison.wall['peer']):.3f} "
            f"| {spread(cpu_ratios)} | {spread(wall_ratios)} | {target} | {difference} |"
        )
    rounds = len(comparisons[0].cpu["project"]) if comparisons else 0
    print(
        f"\nSeconds are medians over {rounds} round(s) for all {n:,} pairs; ratios are per round, peer / project "
        "(above 1: the project is faster). The project's time includes its tokenizer; the peers were given "
        "its tokens."
    )


def print_machine(load: tuple[float, float, float]) -> None:
    from importlib.metadata import version

    import nltk
    import sacrebleu

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 0
    print(
        f"machine: {platform.node()}, {platform.machine()}, {cores} usable core(s); Python "
        f"{platform.python_version()}, nltk {nltk.__version__}, sacrebleu {sacrebleu.__version__}, "
        f"rouge-score {version('rouge-score')}; {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"
    )
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
