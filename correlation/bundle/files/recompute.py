"""recompute.py: recompute this bundle's correlation tables from its inputs with scipy alone.

    python recompute.py            # prints every row, recomputed next to the report's value
    python recompute.py --quiet    # prints only the summary; the exit status says whether all agree

It reads inputs/human_scores.csv (the human score of every reply, per question, as the report used it:
after the rater filter and any normalisation) and inputs/metric_scores.csv (every metric value with its
signature; values of replies the researcher excluded, marked excluded=true, are skipped as the report
skipped them), pairs them by reply, and recomputes Pearson's r, Spearman's rho and Kendall's tau-b with
their p-values (scipy.stats), then compares each with report.json. Needs Python 3.9+ and scipy.

Text cells of the CSV files that began with = + - @ carry a leading ' (a spreadsheet would otherwise run
them as formulas); it is dropped here.
"""

import argparse
import csv
import json
import math
import sys
from pathlib import Path

from scipy import stats

HERE = Path(__file__).resolve().parent
TOLERANCE = 1e-9


def text(cell):
    return cell[1:] if cell.startswith("'") and cell[1:2] in ("=", "+", "-", "@", "\t", "\r") else cell


def read(name):
    with (HERE / "inputs" / name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true")
    quiet = parser.parse_args().quiet
    report = json.loads((HERE / "report.json").read_text(encoding="utf-8"))
    human: dict[str, dict[int, float]] = {}
    for row in read("human_scores.csv"):
        human.setdefault(text(row["question"]), {})[int(row["response_id"])] = float(row["human_score"])
    metric: dict[str, dict[int, float]] = {}
    for row in read("metric_scores.csv"):
        if row.get("excluded") == "true":
            continue
        metric.setdefault(text(row["signature"]), {})[int(row["response_id"])] = float(row["value"])
    checked = disagreements = 0
    for row in report["rows"]:
        scores = human.get(row["question"], {})
        values = metric.get(row["signature"], {})
        pairs = sorted(item for item in scores if item in values and math.isfinite(values[item]))
        x = [scores[item] for item in pairs]
        y = [values[item] for item in pairs]
        ours: dict[str, float] = {"n": len(pairs)}
        if len(pairs) >= 3 and len(set(x)) > 1 and len(set(y)) > 1:
            for name, function in (
                ("pearson", stats.pearsonr),
                ("spearman", stats.spearmanr),
                ("kendall", stats.kendalltau),
            ):
                result = function(x, y)
                ours[name], ours[name + "_p"] = float(result.statistic), float(result.pvalue)
        for key, value in ours.items():
            reported = row.get(key)
            same = (
                reported == value
                if key == "n"
                else (reported is not None and abs(reported - value) <= TOLERANCE * max(1.0, abs(value)))
            )
            checked += 1
            if not same:
                disagreements += 1
            if not quiet or not same:
                print(
                    f"{'ok ' if same else 'DIFF'} {row['question']:<16} {row['metric']:<28} {key:<11} "
                    f"report {reported!r:<24} recomputed {value!r}"
                )
    print(f"{checked} values recomputed, {disagreements} disagree (tolerance {TOLERANCE:g})")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
