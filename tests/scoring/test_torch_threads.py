"""torch's thread count: the setting, the automatic share of the cores, the commands' --threads,
and the Celery signal handlers that set it in a worker's pool processes."""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from celery.concurrency.prefork import TaskPool as PreforkPool
from celery.concurrency.solo import TaskPool as SoloPool
from celery.signals import celeryd_after_setup, worker_process_init
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from scoring import torch_threads
from scoring.metrics.ruber.artifact import TIMINGS_FILE
from scoring.models import TrainedModel
from scoring.torch_threads import (
    POOL_PROCESSES_ENV,
    torch_threads_apply,
    torch_threads_default,
    usable_cores,
    worker_pool_processes,
    worker_process_torch_threads,
)

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(autouse=True)
def torch_threads_restored() -> Iterator[None]:
    """Each test may change torch's thread count; the tests after it get the count back."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def pool_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handlers write the pool size and thread variables into os.environ: undo that afterwards (set
    first, so that monkeypatch removes a variable that was absent)."""
    for name in (POOL_PROCESSES_ENV, "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, "unset by the test")
        monkeypatch.delenv(name)


def run_command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def write_pairs(path: Path, count: int = 80) -> Path:
    """Query-reply pairs on 4 topics (words of a topic repeat, so word2vec has a vocabulary)."""
    generator = random.Random(5)
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(count):
            topic = generator.randrange(4)
            words = [f"w{topic}x{generator.randrange(3)}" for _ in range(4)]
            handle.write(json.dumps({"query": " ".join(words), "reply": " ".join(reversed(words))}) + "\n")
    return path


def not_the_automatic_count() -> int:
    """A thread count that neither torch's default nor the automatic share gives here."""
    return usable_cores() + 1


# --- the default -------------------------------------------------------------------------------------


def test_usable_cores_is_the_process_affinity() -> None:
    pinned = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "from scoring.torch_threads import usable_cores; print(usable_cores())",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert pinned.stdout.strip() == "1"
    assert usable_cores() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize(("cores", "processes", "expected"), [(8, 1, 8), (8, 3, 2), (8, 8, 1), (2, 16, 1)])
def test_default_shares_the_cores_among_processes(
    settings, monkeypatch: pytest.MonkeyPatch, cores: int, processes: int, expected: int
) -> None:
    settings.DIALEVAL_TORCH_THREADS = 0
    monkeypatch.setattr(torch_threads, "usable_cores", lambda: cores)
    assert torch_threads_default(processes=processes) == expected


def test_default_is_the_setting_when_positive(settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_threads, "usable_cores", lambda: 8)
    settings.DIALEVAL_TORCH_THREADS = 3
    assert torch_threads_default() == 3
    assert torch_threads_default(processes=4) == 3  # the setting is per process, whatever the pool size


@pytest.mark.parametrize("value", [-1, "2", 1.5])
def test_default_refuses_a_setting_that_is_no_thread_count(settings, value: object) -> None:
    settings.DIALEVAL_TORCH_THREADS = value
    with pytest.raises(ImproperlyConfigured, match="DIALEVAL_TORCH_THREADS must be 0"):
        torch_threads_default()


def test_apply_changes_torchs_thread_count() -> None:
    wanted = not_the_automatic_count()
    assert torch_threads_apply(wanted) == wanted
    assert torch.get_num_threads() == wanted
    assert torch_threads_apply(1) == 1
    assert torch.get_num_threads() == 1
    with pytest.raises(ValueError, match="at least 1 thread"):
        torch_threads_apply(0)


# --- the commands ------------------------------------------------------------------------------------


@pytest.fixture
def model_dir(tmp_path: Path, settings) -> Path:
    settings.DIALEVAL_MODEL_DIR = tmp_path / "models"
    return settings.DIALEVAL_MODEL_DIR


TRAIN_ARGS = ("--format", "pairs-jsonl", "--epochs", "1", "--device", "cpu")


@pytest.mark.django_db
def test_train_metric_threads_reach_torch(model_dir: Path, tmp_path: Path) -> None:
    wanted = not_the_automatic_count()
    corpus = write_pairs(tmp_path / "pairs.jsonl")
    output = run_command(
        "train_metric",
        "ruber",
        "--corpus",
        str(corpus),
        "--name",
        "t1",
        "--threads",
        str(wanted),
        *TRAIN_ARGS,
    )
    assert f"torch threads: {wanted} (--threads)\n" in output
    assert output.index("torch threads:") < output.index("training ruber on")
    assert torch.get_num_threads() == wanted  # training restores the count it found: the command's
    assert TrainedModel.objects.filter(name="t1").exists()


@pytest.mark.django_db
def test_train_metric_threads_are_the_ones_training_ran_with(model_dir: Path, tmp_path: Path) -> None:
    wanted = not_the_automatic_count()
    corpus = write_pairs(tmp_path / "pairs.jsonl")
    run_command(
        "train_metric",
        "ruber",
        "--corpus",
        str(corpus),
        "--name",
        "t2",
        "--threads",
        str(wanted),
        *TRAIN_ARGS,
    )
    timings = json.loads((Path(TrainedModel.objects.get(name="t2").path) / TIMINGS_FILE).read_text())
    assert timings["threads"] == wanted


@pytest.mark.django_db
def test_train_metric_threads_default_to_the_setting(model_dir: Path, tmp_path: Path, settings) -> None:
    settings.DIALEVAL_TORCH_THREADS = wanted = not_the_automatic_count()
    corpus = write_pairs(tmp_path / "pairs.jsonl")
    output = run_command("train_metric", "ruber", "--corpus", str(corpus), "--name", "t3", *TRAIN_ARGS)
    assert f"torch threads: {wanted} (DIALEVAL_TORCH_THREADS)\n" in output
    assert torch.get_num_threads() == wanted


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_train_metric_refuses_a_bad_thread_count(value: str) -> None:
    with pytest.raises(CommandError, match=r"--threads: expected a number of threads \(1 or more\)"):
        run_command("train_metric", "ruber", "--corpus", "x", "--name", "x", *TRAIN_ARGS, "--threads", value)


@pytest.mark.django_db
def test_train_default_models_passes_threads_on(model_dir: Path, tmp_path: Path, settings) -> None:
    settings.SHARED_DATA_DIR = tmp_path / "shared"
    generator = random.Random(9)
    for split, dialogues in (("train", 40), ("validation", 8)):
        folder = settings.SHARED_DATA_DIR / "dailydialog" / split
        folder.mkdir(parents=True)
        lines = []
        for _ in range(dialogues):
            topic = generator.randrange(3)
            turns = [" ".join(f"t{topic}w{generator.randrange(3)}" for _ in range(4)) for _ in range(4)]
            lines.append(" __eou__ ".join(turns) + " __eou__\n")
        (folder / f"dialogues_{split}.txt").write_text("".join(lines), encoding="utf-8")
    wanted = not_the_automatic_count()
    output = run_command("train_default_models", "--kinds", "ruber", "--threads", str(wanted))
    assert f"torch threads: {wanted} (--threads)\n" in output
    assert torch.get_num_threads() == wanted
    assert TrainedModel.objects.get(kind="ruber").is_default


# --- Celery ------------------------------------------------------------------------------------------


def worker(pool_cls: type, concurrency: int, autoscale_max: int | None = None) -> SimpleNamespace:
    """The attributes of a celery WorkController that the handlers read."""
    return SimpleNamespace(pool_cls=pool_cls, concurrency=concurrency, max_concurrency=autoscale_max)


def test_worker_pool_processes_is_the_pool_size() -> None:
    assert worker_pool_processes(worker(PreforkPool, 4)) == 4
    assert worker_pool_processes(worker(PreforkPool, 2, autoscale_max=6)) == 6
    assert worker_pool_processes(worker(SoloPool, 8)) == 1  # solo runs tasks in the worker process itself


def test_worker_signals_share_the_cores_among_the_pool_processes(
    pool_env: None, settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The real signals, as a prefork worker sends them: the main process learns the pool size, each pool
    process (here this process, which has imported torch already) sets its share."""
    settings.DIALEVAL_TORCH_THREADS = 0
    monkeypatch.setattr(torch_threads, "usable_cores", lambda: 8)
    celeryd_after_setup.send(sender="w1@test", instance=worker(PreforkPool, 4), conf=None)
    assert os.environ[POOL_PROCESSES_ENV] == "4"
    torch.set_num_threads(1)
    with caplog.at_level(logging.INFO, logger="scoring.torch_threads"):
        responses = worker_process_init.send(sender="w1@test")
    assert (worker_process_torch_threads, 2) in responses
    assert torch.get_num_threads() == 2
    assert [record.getMessage() for record in caplog.records] == [
        f"torch threads: 2 in pool process {os.getpid()} (automatic: 8 cores this process may use shared "
        "by 4 processes)"
    ]


def test_pool_process_without_torch_gets_the_count_when_it_imports_torch() -> None:
    """A pool process that has not imported torch does not import it for this; torch, imported later,
    starts with the count (a fresh interpreter, as a pool process before its first learned metric). torch
    caps a count it reads from the environment at the cores it sees, so the pool here is as large as the
    cores: 1 thread each, where torch's own default is every core."""
    if usable_cores() == 1:
        pytest.skip("on 1 core the share (1 thread) is torch's own default: nothing to tell apart")
    script = (
        "import sys\n"
        "from django.conf import settings\n"
        "from scoring.torch_threads import worker_process_torch_threads\n"
        "settings.configure(DIALEVAL_TORCH_THREADS=0)\n"
        "assert worker_process_torch_threads() == 1\n"
        "assert 'torch' not in sys.modules\n"
        "import torch\n"
        "print(torch.get_num_threads())\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env[POOL_PROCESSES_ENV] = str(usable_cores())
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["1"]
