"""How long a worker takes to load an in-process judge's GGUF model: from the file (transformers parses the
GGUF three times and de-quantises) against from the converted copy that the first load keeps
(``DIALEVAL_LLM_CONVERTED_DIR``, scoring/metrics/llm_judge/local_model.py), interleaved A B A B.

Each load runs in a fresh Python process (as a worker's first judge does), on one torch thread; the time is
that of constructing the model only (imports excluded), wall and CPU, measured in the child. The copy is
written once before the rounds, to a temporary folder.

    .venv/bin/python -m bench.llm_model_load [--rounds 5] [--model PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import json, os, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"
import torch, transformers
from pathlib import Path
torch.set_num_threads(1)
from scoring.metrics.llm_judge.local_model import LocalJudgeModel
converted = Path(sys.argv[2]) if sys.argv[2] else None
wall, cpu = time.perf_counter(), time.process_time()
model = LocalJudgeModel(Path(sys.argv[1]), converted_dir=converted)
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                  "from": str(model.loaded_from)}))
"""


def load_once(model: Path, converted: Path | None) -> dict[str, float | str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(model), str(converted or "")],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: SmolLM2-135M)")
    args = parser.parse_args()
    if args.model is None:
        from tests.live_services import smollm2_gguf

        args.model = smollm2_gguf()
    print(
        f"# {args.model.name}, {platform.machine()}, Python {platform.python_version()}, {args.rounds} rounds"
    )
    with tempfile.TemporaryDirectory(prefix="llm-converted-") as folder:
        converted = Path(folder)
        first = load_once(args.model, converted)  # writes the copy
        assert first["from"] == str(args.model), first
        rows: dict[str, dict[str, list[float]]] = {
            "A file": {"wall": [], "cpu": []},
            "B copy": {"wall": [], "cpu": []},
        }
        for _ in range(args.rounds):
            for name, target in (("A file", None), ("B copy", converted)):
                found = load_once(args.model, target)
                expected = (
                    str(args.model) if target is None else str(converted / Path(str(found["from"])).name)
                )
                assert found["from"] == expected, found
                rows[name]["wall"].append(float(found["wall"]))
                rows[name]["cpu"].append(float(found["cpu"]))
    print("| load | wall s (min / median / max) | CPU s (min / median / max) |")
    print("|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {spread(row['wall'])} | {spread(row['cpu'])} |")
    for measure in ("wall", "cpu"):
        ratios = [a / b for a, b in zip(rows["A file"][measure], rows["B copy"][measure], strict=True)]
        print(f"A / B {measure}: {spread(ratios)} (min / median / max over the rounds)")


if __name__ == "__main__":
    main()
