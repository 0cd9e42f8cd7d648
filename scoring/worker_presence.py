"""Which Celery workers are alive, which queues they consume and whether they have CUDA.

Each worker announces itself in the broker's Redis: when it is ready, a daemon thread in its main process
writes ``dialeval:worker:<hostname>`` (a JSON ``WorkerPresence``) every ``DIALEVAL_WORKER_PRESENCE_SECONDS``
with a time-to-live of three intervals, and the worker deletes the key when it shuts down. A worker that
dies without shutting down drops out when its key expires. The web process reads the keys (one SCAN and
one MGET, with a short socket timeout) to route GPU-preferring metrics (``gpu_worker_available``) and to
answer the worker health check (``queue_has_live_worker``), without a ``celery inspect`` broadcast and its
wait for replies.

Whether the worker has CUDA is asked once, in a short-lived child process: ``torch.cuda.is_available()`` in
the worker's main process would load torch there (about 200 MiB) and initialise the CUDA driver, and pool
processes forked from it afterwards (a replacement for a crashed one, say) could not use CUDA.

The signal receivers are connected when this module is imported (``scoring.apps`` does so); they do
nothing outside a worker.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import redis
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

logger = logging.getLogger(__name__)

KEY_PREFIX = "dialeval:worker:"
GPU_QUEUE = "gpu"  # the same name as scoring.services.queueing.GPU_QUEUE, which imports this module
TTL_INTERVALS = 3  # a key outlives two missed announcements
READ_TIMEOUT_SECONDS = 0.5  # the web side: a request must not wait on an unreachable Redis
WRITE_TIMEOUT_SECONDS = 2.0  # the worker side: a background thread, so it can wait a little longer
CUDA_PROBE_TIMEOUT_SECONDS = 120
_CUDA_PROBE = """\
import json, torch
cuda = torch.cuda.is_available()
print(json.dumps({"cuda": cuda, "device_name": torch.cuda.get_device_name(0) if cuda else None}))
"""


@dataclass(frozen=True)
class WorkerPresence:
    """One live worker, as it last announced itself. ``seen_at`` is a Unix time (seconds)."""

    hostname: str
    queues: tuple[str, ...]
    pid: int
    cuda: bool
    device_name: str | None
    concurrency: int | None
    seen_at: float

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> WorkerPresence:
        data = json.loads(text)
        return cls(
            hostname=str(data["hostname"]),
            queues=tuple(str(queue) for queue in data["queues"]),
            pid=int(data["pid"]),
            cuda=bool(data["cuda"]),
            device_name=None if data.get("device_name") is None else str(data["device_name"]),
            concurrency=None if data.get("concurrency") is None else int(data["concurrency"]),
            seen_at=float(data["seen_at"]),
        )


# --- Redis clients --------------------------------------------------------------------------------------


def broker_url() -> str:
    """The Redis the workers and the web share: the Celery broker."""
    return str(getattr(settings, "CELERY_BROKER_URL", None) or settings.REDIS_URL)


@functools.lru_cache(maxsize=8)
def redis_client(url: str, timeout: float = READ_TIMEOUT_SECONDS) -> redis.Redis:
    """A client that gives up after ``timeout`` seconds, without retrying (redis-py retries by default).

    Cached per URL: a client is thread-safe, and its pool notices a fork and reconnects.
    """
    return redis.Redis.from_url(
        url, socket_timeout=timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0)
    )


# --- writing (the worker) -------------------------------------------------------------------------------


def presence_key(hostname: str) -> str:
    return f"{KEY_PREFIX}{hostname}"


def presence_publish(presence: WorkerPresence, *, client: redis.Redis, ttl_seconds: float) -> None:
    """Write ``presence`` to expire after ``ttl_seconds`` (raises redis errors)."""
    client.set(presence_key(presence.hostname), presence.to_json(), px=max(1, round(ttl_seconds * 1000)))


def presence_withdraw(hostname: str, *, client: redis.Redis) -> None:
    """Delete a worker's key (raises redis errors)."""
    client.delete(presence_key(hostname))


def cuda_probe(timeout: float = CUDA_PROBE_TIMEOUT_SECONDS) -> tuple[bool, str | None]:
    """Whether torch sees a CUDA device, and its name, asked in a child process (see the module docstring)."""
    try:
        result = subprocess.run(
            [sys.executable, "-c", _CUDA_PROBE], capture_output=True, text=True, timeout=timeout, check=True
        )
        answer = json.loads(result.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as error:
        logger.warning("could not tell whether this worker has CUDA (taken as no): %s", error)
        return False, None
    return bool(answer["cuda"]), answer.get("device_name")


class PresencePublisher(threading.Thread):
    """Writes ``describe()`` every ``interval`` seconds until ``stop()``; rides out Redis outages.

    An outage is logged once when it starts and once when Redis answers again, not at every attempt.
    """

    def __init__(
        self, *, describe: Callable[[], WorkerPresence], client: redis.Redis, interval: float
    ) -> None:
        super().__init__(name="dialeval-worker-presence", daemon=True)
        self.describe = describe
        self.client = client
        self.interval = interval
        self.in_outage = False
        self.hostname: str | None = None  # the last one announced
        self._stopping = threading.Event()

    def publish_once(self) -> bool:
        """One announcement; False when Redis could not be reached."""
        presence = self.describe()
        self.hostname = presence.hostname
        try:
            presence_publish(presence, client=self.client, ttl_seconds=TTL_INTERVALS * self.interval)
        except redis.RedisError as error:
            if not self.in_outage:
                logger.warning("worker presence: Redis is unreachable, will keep trying (%s)", error)
            self.in_outage = True
            return False
        if self.in_outage:
            logger.info("worker presence: Redis answers again")
        self.in_outage = False
        return True

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.publish_once()
            except Exception:  # never let the thread die: the worker would silently drop out
                logger.exception("worker presence: could not announce this worker")
            self._stopping.wait(self.interval)

    def stop(self, timeout: float = WRITE_TIMEOUT_SECONDS + 1) -> None:
        self._stopping.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout)

    def withdraw(self) -> None:
        """Stop, then delete the key, so that no announcement lands after the delete."""
        self.stop()
        if self.hostname is None:
            return
        try:
            presence_withdraw(self.hostname, client=self.client)
        except redis.RedisError as error:  # the key expires on its own
            logger.warning("worker presence: could not withdraw %s (%s)", self.hostname, error)


# --- the worker's signals -------------------------------------------------------------------------------


def presence_interval() -> float:
    return float(getattr(settings, "DIALEVAL_WORKER_PRESENCE_SECONDS", 10))


def consumer_queue_names(consumer: Any) -> tuple[str, ...]:
    """The queues a worker's consumer takes tasks from now (``celery control add_consumer`` included)."""
    task_consumer = getattr(consumer, "task_consumer", None)
    if task_consumer is not None:
        return tuple(sorted(queue.name for queue in list(task_consumer.queues)))
    return tuple(sorted(consumer.app.amqp.queues.consume_from))


def consumer_describer(consumer: Any, *, cuda: bool, device_name: str | None) -> Callable[[], WorkerPresence]:
    controller = getattr(consumer, "controller", None)
    concurrency = getattr(controller, "concurrency", None)
    last_queues: tuple[str, ...] = ()

    def describe() -> WorkerPresence:
        nonlocal last_queues
        try:  # read from another thread than the consumer's own, so tolerate a list changing under us
            last_queues = consumer_queue_names(consumer)
        except Exception:  # keep the last known queues
            logger.debug("worker presence: could not read the consumer's queues", exc_info=True)
        return WorkerPresence(
            hostname=str(consumer.hostname),
            queues=last_queues,
            pid=os.getpid(),
            cuda=cuda,
            device_name=device_name,
            concurrency=None if concurrency is None else int(concurrency),
            seen_at=time.time(),
        )

    return describe


_publisher: PresencePublisher | None = None
_shutting_down = threading.Event()
_state_lock = threading.Lock()  # orders "start the publisher" against "the worker shuts down"


def _start_publisher(consumer: Any) -> None:
    """Probe CUDA (seconds: it imports torch in a child), then announce; runs off the worker's event loop."""
    global _publisher
    cuda, device_name = cuda_probe()
    publisher = PresencePublisher(
        describe=consumer_describer(consumer, cuda=cuda, device_name=device_name),
        client=redis_client(broker_url(), WRITE_TIMEOUT_SECONDS),
        interval=presence_interval(),
    )
    with _state_lock:
        if _shutting_down.is_set() or _publisher is not None:
            return
        _publisher = publisher
        publisher.start()
    logger.info(
        "worker presence: announcing %s (queues %s; CUDA: %s) every %g s",
        consumer.hostname,
        ",".join(consumer_queue_names(consumer)),
        (device_name or "yes") if cuda else "no",
        publisher.interval,
    )


@worker_ready.connect
def _announce_worker(sender: Any = None, **kwargs: Any) -> None:
    if sender is None or _publisher is not None:
        return
    threading.Thread(
        target=_start_publisher, args=(sender,), name="dialeval-worker-presence-start", daemon=True
    ).start()


@worker_shutdown.connect
def _withdraw_worker(sender: Any = None, **kwargs: Any) -> None:
    global _publisher
    with _state_lock:
        _shutting_down.set()  # a publisher still probing CUDA never starts
        publisher, _publisher = _publisher, None
    if publisher is not None:
        publisher.withdraw()


# --- reading (the web) ----------------------------------------------------------------------------------


def presence_records(*, url: str | None = None) -> list[WorkerPresence]:
    """Every worker whose key has not expired, by hostname (raises redis errors)."""
    client = redis_client(url or broker_url())
    keys = sorted(client.scan_iter(match=f"{KEY_PREFIX}*", count=100))
    if not keys:
        return []
    records = []
    for key, value in zip(keys, client.mget(keys), strict=True):
        if value is None:  # expired between the SCAN and the MGET
            continue
        try:
            records.append(WorkerPresence.from_json(value))
        except (ValueError, KeyError, TypeError):
            logger.warning("worker presence: ignoring the malformed record %r", key)
    return records


_read_outage = threading.Event()  # set while reads fail, so that an outage is logged once, not per read


def live_workers(*, url: str | None = None) -> list[WorkerPresence]:
    """Every live worker; [] when Redis cannot be reached (within about half a second)."""
    try:
        records = presence_records(url=url)
    except (redis.RedisError, OSError, ValueError) as error:
        if not _read_outage.is_set():
            logger.warning("worker presence: cannot read the records; no worker taken as live (%s)", error)
        _read_outage.set()
        return []
    _read_outage.clear()
    return records


def queue_has_live_worker(queue: str, *, url: str | None = None) -> bool:
    return any(queue in worker.queues for worker in live_workers(url=url))


def gpu_worker_available(*, queue: str = GPU_QUEUE, url: str | None = None) -> bool:
    """Whether a live worker that has CUDA consumes the GPU queue."""
    return any(worker.cuda and queue in worker.queues for worker in live_workers(url=url))
