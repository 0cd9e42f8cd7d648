"""Gupta et al. (2019) (Gupta et al. 2019, "Investigating Evaluation of Open-Domain Dialogue Systems With Human
Generated Multiple References") Table 4, word-overlap rows, by every recipe the project has.

Reads ``<data>/multirefeval`` (never copied into the repository): ``mturk_rating_processed_output.csv``
(500 rated replies: 100 contexts x 5 systems) and ``multireftest.json`` (per dialog turn, the original
reply and 4 collected references). A CSV ``context_id`` "d_i" is turn ``i`` of dialog ``d`` (the last
context turn; its ``responses`` answer it); the alignment is checked against ``prevgt``.

Recipes: implementation ``nltk`` on whitespace tokens (``tok:none``), ``nltk`` on the project tokenizer
(``tok:en-v1``) and ``nlg-eval`` (pycocoevalcap BLEU, METEOR 1.5, ROUGE-L beta 1.2), for BLEU-1..4,
METEOR and ROUGE-L; reference sets: the original reply alone (Table 4 "Single") and every non-empty subset
of the five released references (31); aggregations: ``max`` (the best single-reference score, Gupta et al. (2019)
eq. 1) and ``joint`` (the tool's own multi-reference score: nltk's joint BLEU, coco's joint BLEU, coco's
ROUGE-L with precision and recall each maximised). nltk's METEOR and ROUGE-L, and METEOR 1.5, only have
``max`` (their multi-reference score is that maximum: checked below). Every (reply, single reference)
score is computed once; ``max`` aggregations come from that matrix, ``joint`` ones from real
multi-reference calls.

Prints (1) each recipe's single-reference table beside the paper's, (2) for every cell of the paper's
"Multiple" columns and for the single BLEU-3 cells, the closest value any recipe, subset and aggregation
gives, and (3) which cells are reproduced to +-0.0005.

    .venv/bin/python -m bench.multiref_table4 [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import csv
import functools
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# METEOR's WordNet, built by scripts/setup.sh; nltk reads NLTK_DATA when it is first imported.
os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))

import numpy as np
from scipy import stats
from tqdm import tqdm

from scoring.metrics.registry import compute_metrics

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
METRICS = ("bleu-1", "bleu-2", "bleu-3", "bleu-4", "meteor", "rouge-l")
BLEU = METRICS[:4]
LABELS = {
    "bleu-1": "BLEU-1",
    "bleu-2": "BLEU-2",
    "bleu-3": "BLEU-3",
    "bleu-4": "BLEU-4",
    "meteor": "METEOR",
    "rouge-l": "ROUGE-L",
}
# Gupta et al. (2019), Table 4, as printed: Single (Spearman, p, Pearson, p), Multiple (Spearman, p, Pearson, p).
PAPER: dict[str, tuple[float, ...]] = {
    "bleu-1": (0.0241, 0.591, 0.1183, 0.008, 0.1572, 0.000, 0.2190, 0.000),
    "bleu-2": (0.0250, 0.577, 0.1803, 0.000, 0.2077, 0.000, 0.2910, 0.000),
    "bleu-3": (0.0608, 0.175, 0.1269, 0.005, 0.2520, 0.000, 0.2086, 0.000),
    "bleu-4": (0.0345, 0.441, 0.1380, 0.002, 0.2202, 0.000, 0.2333, 0.000),
    "meteor": (0.1064, 0.017, 0.1871, 0.000, 0.2247, 0.000, 0.2855, 0.000),
    "rouge-l": (0.0715, 0.110, 0.1408, 0.002, 0.2203, 0.000, 0.2798, 0.000),
}
TOLERANCE = 0.0005
REFERENCE_NAMES = ("orig", "new1", "new2", "new3", "new4")  # responses[0] = the original DailyDialog reply
COCO_BETA = 1.2
COEFFICIENTS = ("Spearman", "Pearson")


@dataclass(frozen=True)
class Recipe:
    name: str
    implementation: str
    tokenizer: str

    def compute(
        self,
        names: Sequence[str],
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        **params: str,
    ) -> dict[str, list[float]]:
        values = compute_metrics(
            names,
            hypotheses,
            references,
            [""] * len(hypotheses),
            "en",
            params or None,
            tokenizer=self.tokenizer,
            implementations=dict.fromkeys(names, self.implementation),
        )
        result = {}
        for name, column in values.items():
            if any(value is None for value in column):
                raise SystemExit(f"{self.name} {name}: no value for some replies")
            result[name] = [float(value) for value in column if value is not None]
        return result


RECIPES = (
    Recipe("nltk tok:none", "nltk", "none"),
    Recipe("nltk tok:en-v1", "nltk", "default"),
    Recipe("nlg-eval", "nlg-eval", "default"),  # its own tokens (the tokenizer argument does not apply)
)


@dataclass(frozen=True)
class Candidate:
    """One way to compute a column of scores: recipe, reference subset, aggregation."""

    recipe: str
    subset: tuple[int, ...]  # indices into the five released references
    aggregation: str
    spearman: float
    spearman_p: float
    pearson: float
    pearson_p: float

    def describe(self) -> str:
        refs = "+".join(REFERENCE_NAMES[index] for index in self.subset)
        return f"{self.recipe}, refs {refs}, {self.aggregation}"


@dataclass
class Data:
    hypotheses: list[str]
    human: list[float]
    prevgt: list[str]
    references: list[list[str]]  # the five released references of each reply's context
    csv_subset: tuple[int, ...] | None  # the subset that the CSV's all_references column is, if it is one


def _normalised(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").split()).lower()


def load(folder: Path) -> Data:
    with (folder / "mturk_rating_processed_output.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with (folder / "multireftest.json").open(encoding="utf-8") as lines:
        dialogs = [json.loads(line)["dialogue"] for line in lines if line.strip()]
    references: list[list[str]] = []
    aligned = exact = 0
    subsets: set[tuple[int, ...] | None] = set()
    for row in rows:
        dialog, turn = (int(part) for part in row["context_id"].split("_"))
        responses = list(dialogs[dialog][turn].get("responses") or [])
        if len(responses) != len(REFERENCE_NAMES):
            raise SystemExit(f"context {row['context_id']}: {len(responses)} references in multireftest.json")
        references.append(responses)
        aligned += _normalised(responses[0]) == _normalised(row["prevgt"])
        exact += responses[0] == row["prevgt"]
        indices = []
        for text in row["all_references"].split("\t"):
            found = [index for index, ref in enumerate(responses) if _normalised(ref) == _normalised(text)]
            indices.append(found[0] if found else -1)
        subsets.add(tuple(sorted(indices)) if -1 not in indices else None)
    print(
        f"{len(rows)} rated replies; context_id 'dialog_turn' -> multireftest.json dialog, turn: prevgt equals the "
        f"original reference (responses[0]) for {aligned} of {len(rows)} modulo whitespace/apostrophes/case, "
        f"{exact} exactly"
    )
    csv_subset = subsets.pop() if len(subsets) == 1 else None
    if csv_subset is not None:
        names = "+".join(REFERENCE_NAMES[index] for index in csv_subset)
        print(f"the CSV's all_references column is, in every row, the released references {names}")
    else:
        print("the CSV's all_references column is not one fixed subset of the released references")
    if aligned != len(rows):
        raise SystemExit("the CSV and multireftest.json do not align; nothing computed")
    return Data(
        hypotheses=[row["response"] for row in rows],
        human=[float(row["human_average_rating"]) for row in rows],
        prevgt=[row["prevgt"] for row in rows],
        references=references,
        csv_subset=csv_subset,
    )


def correlations(values: Sequence[float], human: Sequence[float]) -> tuple[float, float, float, float]:
    rho = stats.spearmanr(values, human)
    r = stats.pearsonr(values, human)
    return float(rho.statistic), float(rho.pvalue), float(r.statistic), float(r.pvalue)


def coco_f(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """pycocoevalcap's ROUGE-L F from (maximised) precision and recall; 0 where either is 0."""
    beta2 = COCO_BETA**2
    both = (precision != 0) & (recall != 0)
    denominator = np.where(both, recall + beta2 * precision, 1.0)
    return np.where(both, (1 + beta2) * precision * recall / denominator, 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="the shared data folder (../shared/data)"
    )
    args = parser.parse_args()
    folder = args.data / "multirefeval" if (args.data / "multirefeval").is_dir() else args.data
    if not (folder / "mturk_rating_processed_output.csv").is_file():
        raise SystemExit(
            f"{folder} has no mturk_rating_processed_output.csv: this needs ../shared/data/multirefeval"
        )
    started = time.perf_counter()
    data = load(folder)
    n = len(data.hypotheses)
    all_refs = list(range(len(REFERENCE_NAMES)))
    subsets = [
        subset for size in range(1, len(all_refs) + 1) for subset in itertools.combinations(all_refs, size)
    ]

    # -- every (reply, single reference) score, once per recipe: per_ref[recipe][metric] has shape (n, 5)
    per_ref: dict[str, dict[str, np.ndarray]] = {recipe.name: {} for recipe in RECIPES}
    coco_pr: dict[str, np.ndarray] = {}  # nlg-eval ROUGE-L precision and recall, shape (n, 5)
    single: dict[str, dict[str, list[float]]] = {}
    joint: dict[tuple[str, tuple[int, ...]], dict[str, list[float]]] = {}
    steps: list[tuple[str, Callable[[], None]]] = []

    def single_reference(recipe: Recipe, index: int) -> None:
        refs = [[row[index]] for row in data.references]
        values = recipe.compute(METRICS, data.hypotheses, refs)
        for name in METRICS:
            per_ref[recipe.name].setdefault(name, np.zeros((n, len(all_refs))))[:, index] = values[name]
        if recipe.implementation == "nlg-eval":
            parts = recipe.compute(["rouge-l-precision", "rouge-l-recall"], data.hypotheses, refs)
            for part, key in (("rouge-l-precision", "P"), ("rouge-l-recall", "R")):
                coco_pr.setdefault(key, np.zeros((n, len(all_refs))))[:, index] = parts[part]

    def prevgt_scores(recipe: Recipe) -> None:
        single[recipe.name] = recipe.compute(METRICS, data.hypotheses, [[text] for text in data.prevgt])

    def joint_bleu(recipe: Recipe, subset: tuple[int, ...]) -> None:
        refs = [[row[index] for index in subset] for row in data.references]
        params = {"refagg": "joint"} if recipe.implementation == "nltk" else {}
        joint[recipe.name, subset] = recipe.compute(BLEU, data.hypotheses, refs, **params)

    checks: dict[str, float] = {}

    def check_max(recipe: Recipe) -> None:
        """The registry's own multi-reference score of the max-aggregated metrics equals the max of the matrix."""
        names = [*METRICS] if recipe.implementation == "nltk" else ["meteor"]
        values = recipe.compute(names, data.hypotheses, data.references)
        for name in names:
            gap = float(np.max(np.abs(np.asarray(values[name]) - per_ref[recipe.name][name].max(axis=1))))
            checks[f"{recipe.name} {name}: registry 5-reference score vs max over single references"] = gap
        if recipe.implementation == "nlg-eval":
            rouge = recipe.compute(["rouge-l"], data.hypotheses, data.references)["rouge-l"]
            derived = coco_f(coco_pr["P"].max(axis=1), coco_pr["R"].max(axis=1))
            gap = float(np.max(np.abs(np.asarray(rouge) - derived)))
            checks["nlg-eval rouge-l: registry 5-reference score vs F(max P, max R) of single references"] = (
                gap
            )

    for recipe in RECIPES:
        steps.append((f"{recipe.name} prevgt", functools.partial(prevgt_scores, recipe)))
        for index in all_refs:
            steps.append((f"{recipe.name} ref {index}", functools.partial(single_reference, recipe, index)))
        steps.append((f"{recipe.name} check", functools.partial(check_max, recipe)))
        for subset in subsets:
            if len(subset) > 1:
                steps.append((f"{recipe.name} joint {subset}", functools.partial(joint_bleu, recipe, subset)))
    progress = tqdm(steps, desc="scoring", unit="call", file=sys.stderr)
    for label, step in progress:
        progress.set_postfix_str(label, refresh=False)
        step()

    # -- every candidate column and its correlations
    candidates: dict[str, list[Candidate]] = {name: [] for name in METRICS}

    def add(
        recipe: str, subset: tuple[int, ...], aggregation: str, name: str, values: Sequence[float]
    ) -> None:
        spearman, spearman_p, pearson, pearson_p = correlations(values, data.human)
        candidates[name].append(
            Candidate(recipe, subset, aggregation, spearman, spearman_p, pearson, pearson_p)
        )

    for recipe in RECIPES:
        for subset in subsets:
            columns = list(subset)
            for name in METRICS:
                add(
                    recipe.name,
                    subset,
                    "max",
                    name,
                    per_ref[recipe.name][name][:, columns].max(axis=1).tolist(),
                )
            if len(subset) == 1:
                continue  # one reference: every aggregation is the single-reference score
            for name in BLEU:
                add(recipe.name, subset, "joint", name, joint[recipe.name, subset][name])
            if recipe.implementation == "nlg-eval":
                derived = coco_f(coco_pr["P"][:, columns].max(axis=1), coco_pr["R"][:, columns].max(axis=1))
                add(recipe.name, subset, "joint", "rouge-l", derived.tolist())

    print(f"\nChecks (largest absolute difference over the {n} replies):")
    for label, gap in checks.items():
        print(f"  {label}: {gap:.2e}")
    prevgt_equal = all(
        bool(np.allclose(single[r.name][name], per_ref[r.name][name][:, 0], rtol=0, atol=1e-12))
        for r in RECIPES
        for name in METRICS
    )
    print(f"  single-reference scores against prevgt equal those against responses[0]: {prevgt_equal}")

    # -- (1) single reference
    reproduced: list[str] = []
    not_reproduced: list[str] = []
    print(f"\n(1) Single reference (prevgt), Spearman / Pearson against the mean human rating, {n} replies")
    print("    '=' marks a coefficient within +-0.0005 of the paper's")
    header = f"{'metric':8} {'Spearman':>9} {'p':>6} {'Pearson':>9} {'p':>6}   | paper {'Spearman':>9} {'p':>6} {'Pearson':>9} {'p':>6}"
    single_hits: dict[tuple[str, int], list[str]] = {}
    for recipe in RECIPES:
        print(f"\n  {recipe.name}")
        print(f"  {header}")
        for name in METRICS:
            spearman, spearman_p, pearson, pearson_p = correlations(single[recipe.name][name], data.human)
            paper = PAPER[name]
            marks = []
            for offset, value in ((0, spearman), (2, pearson)):
                hit = abs(value - paper[offset]) <= TOLERANCE
                marks.append("=" if hit else " ")
                if hit:
                    single_hits.setdefault((name, offset), []).append(recipe.name)
            print(
                f"  {LABELS[name]:8} {spearman:9.4f}{marks[0]}{spearman_p:6.3f} {pearson:9.4f}{marks[1]}{pearson_p:6.3f}"
                f"   |       {paper[0]:9.4f} {paper[1]:6.3f} {paper[2]:9.4f} {paper[3]:6.3f}"
            )
    for name in METRICS:
        for offset, coefficient in ((0, "Spearman"), (2, "Pearson")):
            cell = f"Single {LABELS[name]} {coefficient}"
            hits = single_hits.get((name, offset))
            (reproduced if hits else not_reproduced).append(cell + (f" ({', '.join(hits)})" if hits else ""))

    # -- (2) closest values
    per_metric = len(candidates["bleu-1"])
    print(
        f"\n(2) Closest value to each paper cell over every recipe x reference subset x aggregation "
        f"({per_metric} columns per BLEU order, {len(candidates['meteor'])} for METEOR, "
        f"{len(candidates['rouge-l'])} for ROUGE-L; subsets of orig, new1..new4)"
    )
    print(
        f"  {'cell':26} {'paper':>7} {'closest':>8} {'gap':>7} {'p':>6} (paper p)  {'range of all':>15}  "
        "recipe, refs, aggregation of the closest"
    )
    targets = [(name, "Multiple", 4) for name in METRICS] + [("bleu-3", "Single", 0)]
    exact_cells: list[str] = []  # a column that prints the paper's value itself, to its 4 decimals
    for name, column, offset in targets:
        for position, coefficient in ((0, "Spearman"), (2, "Pearson")):
            paper_value, paper_p = PAPER[name][offset + position], PAPER[name][offset + position + 1]
            pool = candidates[name]
            if column == "Single":
                pool = [c for c in pool if c.subset == (0,)]  # prevgt; the closest over all subsets follows
            best = _closest(pool, position, paper_value)
            value, p_value = _coefficient(best, position), _p_value(best, position)
            gap = abs(value - paper_value)
            cell = f"{column} {LABELS[name]} {coefficient}"
            every = [_coefficient(c, position) for c in pool]
            print(
                f"  {cell:26} {paper_value:7.4f} {value:8.4f} {gap:7.4f} {p_value:6.3f} ({paper_p:.3f})  "
                f"{min(every):7.4f}..{max(every):6.4f}  {best.describe()}"
            )
            exact = [
                c for c in candidates[name] if f"{_coefficient(c, position):.4f}" == f"{paper_value:.4f}"
            ]
            if exact:
                exact_cells.append(f"{cell} ({'; '.join(c.describe() for c in exact)})")
            if column == "Single":
                anywhere = _closest(candidates[name], position, paper_value)
                any_value = _coefficient(anywhere, position)
                every = [_coefficient(c, position) for c in candidates[name]]
                print(
                    f"  {'  (any reference subset)':26} {paper_value:7.4f} {any_value:8.4f} "
                    f"{abs(any_value - paper_value):7.4f} {_p_value(anywhere, position):6.3f} ({paper_p:.3f})  "
                    f"{min(every):7.4f}..{max(every):6.4f}  {anywhere.describe()}"
                )
            elif gap <= TOLERANCE:
                reproduced.append(f"{cell} ({best.describe()})")
            else:
                not_reproduced.append(f"{cell} (closest {value:.4f}, gap {gap:.4f})")
    print(
        "\n  Both coefficients of a row from one column (the column minimising the larger of the two gaps):"
    )
    for name, column, offset in targets:
        pool = candidates[name] if column == "Multiple" else [c for c in candidates[name] if c.subset == (0,)]
        paper_pair = (PAPER[name][offset], PAPER[name][offset + 2])
        best = min(pool, key=functools.partial(_pair_gap, paper=paper_pair))
        print(
            f"  {column + ' ' + LABELS[name]:16} paper {paper_pair[0]:.4f}/{paper_pair[1]:.4f}  "
            f"closest {best.spearman:.4f}/{best.pearson:.4f}  larger gap {_pair_gap(best, paper_pair):.4f}  "
            f"{best.describe()}"
        )
    print("\n  For comparison, all five references, and the CSV's all_references subset:")
    shown = [tuple(all_refs)] + (
        [data.csv_subset] if data.csv_subset and data.csv_subset != tuple(all_refs) else []
    )
    for subset in shown:
        for name in METRICS:
            row = [c for c in candidates[name] if c.subset == subset]
            cells = "  ".join(f"{c.recipe}/{c.aggregation} {c.spearman:.4f}/{c.pearson:.4f}" for c in row)
            refs = "+".join(REFERENCE_NAMES[index] for index in subset)
            print(f"  {refs:26} {LABELS[name]:8} paper {PAPER[name][4]:.4f}/{PAPER[name][6]:.4f}  {cells}")

    # -- (3) verdict
    print(
        f"\n(3) Reproduced to +-{TOLERANCE} ({len(reproduced)} cells): " + ("; ".join(reproduced) or "none")
    )
    print(f"    Not reproduced ({len(not_reproduced)} cells): " + ("; ".join(not_reproduced) or "none"))
    print(
        "    Of the cells searched in (2), printed to the paper's 4 decimals exactly by some column (any subset): "
        + ("; ".join(exact_cells) or "none")
    )
    print(
        "    (a Multiple cell is searched among many columns, so a lone hit can be chance; the row lines above say"
        " whether one column gives both coefficients)"
    )
    print(f"\n{time.perf_counter() - started:.0f} s")


def _coefficient(candidate: Candidate, position: int) -> float:
    return candidate.spearman if position == 0 else candidate.pearson


def _p_value(candidate: Candidate, position: int) -> float:
    return candidate.spearman_p if position == 0 else candidate.pearson_p


def _closest(pool: Sequence[Candidate], position: int, value: float) -> Candidate:
    return min(pool, key=lambda candidate: abs(_coefficient(candidate, position) - value))


def _pair_gap(candidate: Candidate, paper: tuple[float, float]) -> float:
    gap = max(abs(candidate.spearman - paper[0]), abs(candidate.pearson - paper[1]))
    return gap if not math.isnan(gap) else math.inf


if __name__ == "__main__":
    main()
