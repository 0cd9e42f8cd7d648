"""Sending scoring tasks, and which queue a chunk goes to.

Tasks are sent by name (``scoring.tasks`` registers them), so the services never import the tasks module
that calls them. Sending fails fast when the broker is unreachable: one quick retry, then ``False``; the
caller leaves the row as it is (PENDING) and the periodic recovery sends it again once Redis answers, so a
web request never blocks for long and never reports a run as queued when it is not.

Routing: chunks of metrics that prefer a GPU (``MetricSpec.prefers_gpu``: BERT-RUBER, RUBER's
neural s_U, LLM judges on a local model) go to the "gpu" queue when a worker with CUDA consumes it (``scoring.worker_presence``),
otherwise to the default "cpu" queue; everything else goes to "cpu".
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings

from kernel.broker import task_publish
from scoring.metrics.registry import metric_specs, split_metric_names

logger = logging.getLogger(__name__)

RUN_TASK = "scoring.execute_run"  # plan a run, then start its chunk workers
CHUNK_TASK = "scoring.work_on_run"  # claim and compute the next chunk of a run on one queue
GPU_QUEUE = "gpu"


def default_queue() -> str:
    return str(settings.CELERY_TASK_DEFAULT_QUEUE)


def task_send(name: str, *, args: Sequence[object], queue: str | None = None) -> bool:
    """Send task ``name``; False (logged) when the broker cannot be reached (kernel/broker.py)."""
    return task_publish(name, args=args, queue=queue or default_queue())


def chunk_queue(*, metrics: Sequence[str], gpu_available: bool) -> str:
    """The queue for a chunk of ``metrics``: "gpu" for GPU-preferring metrics when a GPU worker is live."""
    response_metrics, _ = split_metric_names(metrics)
    prefers_gpu = any(spec.prefers_gpu for spec in metric_specs(response_metrics))
    return preferred_queue(prefers_gpu=prefers_gpu, gpu_available=gpu_available)


def preferred_queue(*, prefers_gpu: bool, gpu_available: bool) -> str:
    """ "gpu" for work that prefers a GPU (a metric's spec, a pairwise judge's local backend) when a GPU
    worker is live, else the default queue."""
    return GPU_QUEUE if gpu_available and prefers_gpu else default_queue()


def gpu_worker_available() -> bool:
    """Whether a live worker with CUDA consumes the "gpu" queue (never raises; False when unknown)."""
    try:
        from scoring.worker_presence import gpu_worker_available as available
    except ImportError:  # pragma: no cover - the module ships with the app
        return False
    try:
        return bool(available())
    except Exception:  # presence is advisory: an error means "no GPU worker known"
        logger.exception("could not read the worker presence records")
        return False
