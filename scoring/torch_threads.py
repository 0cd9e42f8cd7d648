"""How many CPU threads torch uses in each process that trains or scores.

torch sizes its intra-op thread pool to the machine's physical cores, whatever else runs there. Beside a
Celery worker or the web server, its threads wait on each other for cores that other processes hold (GNU
OpenMP threads spin before they sleep), and one epoch of RUBER training took about 2 hours where the same
job pinned to one core was 7-15x faster. So every process that runs torch sets the count itself:

- ``settings.DIALEVAL_TORCH_THREADS`` when it is positive (0, the default, means automatic);
- automatic: the cores this process may use (its CPU affinity), divided among the processes that share
  them: all of them for a command run alone (``train_metric``), ``cores // concurrency`` (at least 1) for
  each pool process of a prefork Celery worker.

``train_metric --threads N`` overrides both for one training. Celery: :func:`worker_pool_size_record`
(``celeryd_after_setup``, in the worker's main process once its pool size is known, before the pool
starts) hands the pool size to the pool processes through the environment, and
:func:`worker_process_torch_threads` (``worker_process_init``, in each prefork pool process, or in the
worker itself with ``--pool solo``) sets the count. Importing this module connects both; scoring's
``AppConfig.ready`` imports it.

OpenMP's wait policy (``OMP_WAIT_POLICY``) is read once, when torch is first imported, so
:func:`omp_wait_policy_setdefault` must run at process start, before anything imports torch.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import Any

from celery.signals import celeryd_after_setup, worker_process_init

logger = logging.getLogger(__name__)

SETTING = "DIALEVAL_TORCH_THREADS"
# The worker's pool size, set by the main worker process for the pool processes it forks.
POOL_PROCESSES_ENV = "DIALEVAL_WORKER_POOL_PROCESSES"
# OpenMP threads that find no work sleep at once instead of spinning first. Small checks on a 2-core machine
# busy with other work (s_U training steps, 2 threads): beside one busy process 8.5 s -> 3.1 s
# (median of 2 rounds); alone 2.9 s -> 3.6 s (best of 4). With 1 thread torch starts no OpenMP team, and
# the policy changes nothing. bench/training_threads.py --compare-wait-policy measures it properly.
OMP_WAIT_POLICY = "PASSIVE"


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the OS has one, else the CPU count."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def torch_threads_setting() -> int:
    """``settings.DIALEVAL_TORCH_THREADS`` (0: automatic); 0 too where Django is not configured (a
    benchmark's child process, say)."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    if not settings.configured:
        return 0
    value = getattr(settings, SETTING, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ImproperlyConfigured(f"{SETTING} must be 0 (automatic) or a number of threads, not {value!r}")
    return value


def torch_threads_default(*, processes: int = 1) -> int:
    """The setting when positive, else this process's share of its cores among ``processes`` processes
    that use them at once (at least 1)."""
    return torch_threads_setting() or max(1, usable_cores() // max(1, processes))


def torch_threads_apply(threads: int) -> int:
    """Make torch use ``threads`` threads in this process; returns the count torch reports.

    Inter-op threads are set too where torch still allows it: it refuses (RuntimeError) once inter-op
    work has started or the count was set before, and training runs on the intra-op threads anyway.
    """
    if threads < 1:
        raise ValueError(f"torch needs at least 1 thread, not {threads}")
    import torch

    torch.set_num_threads(threads)
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(threads)
    return int(torch.get_num_threads())


def torch_threads_configure(threads: int) -> int:
    """``threads`` for torch in this process, without importing torch when it is not imported yet.

    A process that has not imported torch (a Celery pool process before its first learned metric) gets
    ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS``, which torch's OpenMP and MKL read when torch is first
    imported; so a process that never needs torch never pays for loading it (torch caps a count read
    from them at the cores it sees). The same variables also cap numpy's OpenBLAS when numpy is imported
    after this, which shares the cores in the same way.
    """
    if "torch" in sys.modules:
        return torch_threads_apply(threads)
    if threads < 1:
        raise ValueError(f"torch needs at least 1 thread, not {threads}")
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
    return threads


def threads_argument(value: str) -> int:
    """``--threads``'s type: a number of threads, at least 1."""
    try:
        threads = int(value)
    except ValueError:
        threads = 0
    if threads < 1:
        import argparse

        raise argparse.ArgumentTypeError(f"expected a number of threads (1 or more), got {value!r}")
    return threads


def torch_threads_source(*, processes: int = 1) -> str:
    """Where :func:`torch_threads_default` takes its number from, for logs and command output."""
    if torch_threads_setting():
        return SETTING
    shared = f" shared by {processes} processes" if processes > 1 else ""
    return f"automatic: {usable_cores()} cores this process may use{shared}"


def omp_wait_policy_setdefault() -> str | None:
    """Set ``OMP_WAIT_POLICY`` to :data:`OMP_WAIT_POLICY` unless it is set; returns the policy in force.

    OpenMP reads it when torch is first imported: call this first thing in a process's entry point
    (manage.py, the Celery app, the WSGI/ASGI modules). Threads > 1 beside other busy processes are where
    it matters; with 1 thread torch starts no OpenMP team to wait in.
    """
    if "torch" in sys.modules and "OMP_WAIT_POLICY" not in os.environ:
        logger.warning("OMP_WAIT_POLICY set after torch was imported: it has no effect in this process")
    return os.environ.setdefault("OMP_WAIT_POLICY", OMP_WAIT_POLICY)


def worker_pool_processes(worker: Any) -> int:
    """How many pool processes of ``worker`` (a Celery WorkController) may run tasks at once: the pool's
    size (the autoscaler's maximum, if any); 1 for the solo pool, which runs tasks in the worker itself."""
    from celery.concurrency.solo import TaskPool as SoloPool

    pool_cls = getattr(worker, "pool_cls", None)
    if isinstance(pool_cls, type) and issubclass(pool_cls, SoloPool):
        return 1
    size = getattr(worker, "max_concurrency", None) or getattr(worker, "concurrency", None)
    return size if isinstance(size, int) and size > 0 else 1


@celeryd_after_setup.connect(dispatch_uid="dialeval.torch_threads.pool_size")
def worker_pool_size_record(sender: Any = None, instance: Any = None, **kwargs: Any) -> None:
    """In the worker's main process, before the pool starts: the pool size, for the pool processes."""
    os.environ[POOL_PROCESSES_ENV] = str(worker_pool_processes(instance))


@worker_process_init.connect(dispatch_uid="dialeval.torch_threads.pool_process")
def worker_process_torch_threads(**kwargs: Any) -> int:
    """In each pool process as it starts: torch's share of the cores (see the module docstring)."""
    try:
        processes = max(1, int(os.environ.get(POOL_PROCESSES_ENV, "1")))
    except ValueError:
        processes = 1
    threads = torch_threads_configure(torch_threads_default(processes=processes))
    logger.info(
        "torch threads: %d in pool process %d (%s)",
        threads,
        os.getpid(),
        torch_threads_source(processes=processes),
    )
    return threads
