"""Worker presence (scoring/worker_presence.py) against a real redis-server, and a real Celery worker.

The unit tests use their own Redis database (not the broker's db 0 that a session worker writes its own
record to), emptied before each test.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis
from kombu import Queue

from scoring import worker_presence
from scoring.worker_presence import (
    PresencePublisher,
    WorkerPresence,
    consumer_describer,
    gpu_worker_available,
    live_workers,
    presence_key,
    presence_publish,
    presence_withdraw,
    queue_has_live_worker,
    redis_client,
)
from tests.live_services import REDIS_SERVER, CeleryWorkerProcess, free_port

pytestmark = pytest.mark.integration


@pytest.fixture
def presence_url(redis_server: str) -> Iterator[str]:
    url = redis_server.rsplit("/", 1)[0] + "/7"
    redis_client(url).flushdb()
    yield url
    redis_client(url).flushdb()


def presence(hostname: str, *, queues: tuple[str, ...] = ("cpu",), cuda: bool = False) -> WorkerPresence:
    return WorkerPresence(
        hostname=hostname,
        queues=queues,
        pid=1234,
        cuda=cuda,
        device_name="NVIDIA H100" if cuda else None,
        concurrency=2,
        seen_at=time.time(),
    )


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_published_records_read_back(presence_url: str) -> None:
    client = redis_client(presence_url)
    cpu = presence("celery@a", queues=("cpu",))
    gpu = presence("celery@b", queues=("gpu",), cuda=True)
    presence_publish(cpu, client=client, ttl_seconds=30)
    presence_publish(gpu, client=client, ttl_seconds=30)

    assert sorted(live_workers(url=presence_url), key=lambda w: w.hostname) == [cpu, gpu]
    assert queue_has_live_worker("cpu", url=presence_url)
    assert queue_has_live_worker("gpu", url=presence_url)
    assert not queue_has_live_worker("other", url=presence_url)
    assert 0 < client.pttl(presence_key("celery@a")) <= 30_000

    presence_withdraw("celery@a", client=client)
    assert live_workers(url=presence_url) == [gpu]


def test_a_malformed_record_is_skipped(presence_url: str) -> None:
    client = redis_client(presence_url)
    client.set(presence_key("celery@broken"), b"{not json")
    client.set(presence_key("celery@partial"), b'{"hostname": "celery@partial"}')
    presence_publish(presence("celery@ok"), client=client, ttl_seconds=30)
    assert [worker.hostname for worker in live_workers(url=presence_url)] == ["celery@ok"]


def test_a_record_expires_after_its_ttl(presence_url: str) -> None:
    presence_publish(presence("celery@short"), client=redis_client(presence_url), ttl_seconds=0.3)
    assert queue_has_live_worker("cpu", url=presence_url)
    assert wait_for(lambda: not queue_has_live_worker("cpu", url=presence_url), timeout=3)


@pytest.mark.parametrize(
    ("queues", "cuda", "expected"),
    [
        (("gpu",), True, True),
        (("cpu", "gpu"), True, True),
        (("gpu",), False, False),  # consumes gpu, but torch sees no CUDA: the metric would run on its CPU
        (("cpu",), True, False),  # has CUDA, but GPU work is not sent to its queue
    ],
)
def test_gpu_worker_available(presence_url: str, queues: tuple[str, ...], cuda: bool, expected: bool) -> None:
    assert not gpu_worker_available(url=presence_url)
    presence_publish(
        presence("celery@w", queues=queues, cuda=cuda), client=redis_client(presence_url), ttl_seconds=30
    )
    assert gpu_worker_available(url=presence_url) is expected


def test_the_publisher_refreshes_then_withdraws_and_an_unrefreshed_key_expires(presence_url: str) -> None:
    client = redis_client(presence_url)
    publisher = PresencePublisher(describe=lambda: presence("celery@thread"), client=client, interval=0.1)
    publisher.start()
    try:
        assert wait_for(lambda: bool(live_workers(url=presence_url)))
        first = live_workers(url=presence_url)[0].seen_at
        assert wait_for(lambda: live_workers(url=presence_url)[0].seen_at > first)
        assert client.pttl(presence_key("celery@thread")) <= 300  # three intervals
    finally:
        publisher.withdraw()
    assert not publisher.is_alive()
    assert live_workers(url=presence_url) == []  # withdrawn at once, not left to expire

    # A worker killed without shutting down: its last record expires after three intervals.
    stopped = PresencePublisher(describe=lambda: presence("celery@killed"), client=client, interval=0.1)
    assert stopped.publish_once()
    assert queue_has_live_worker("cpu", url=presence_url)
    assert wait_for(lambda: not queue_has_live_worker("cpu", url=presence_url), timeout=2)


def test_the_publisher_rides_out_an_outage_and_logs_it_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    publisher = PresencePublisher(
        describe=lambda: presence("celery@o"), client=redis_client(url), interval=0.1
    )
    with caplog.at_level(logging.INFO, logger="scoring.worker_presence"):
        assert not publisher.publish_once()
        assert not publisher.publish_once()
        assert not publisher.publish_once()
        server = subprocess.Popen(
            [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert wait_for(publisher.publish_once, timeout=10)
            assert publisher.publish_once()
            assert queue_has_live_worker("cpu", url=url)
        finally:
            server.terminate()
            server.wait(timeout=10)
    messages = [record.getMessage() for record in caplog.records]
    assert sum("Redis is unreachable" in message for message in messages) == 1, messages
    assert sum("Redis answers again" in message for message in messages) == 1, messages


def test_reads_give_up_quickly_when_redis_is_unreachable() -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"
    # A port that accepts connections (the kernel's backlog) but never answers: the socket timeout applies.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        mute = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
        for url in (closed, mute):
            started = time.monotonic()
            assert live_workers(url=url) == []
            assert not queue_has_live_worker("cpu", url=url)
            assert not gpu_worker_available(url=url)
            assert time.monotonic() - started < 3 * 1.0, url  # three reads, each within about 0.5 s


def test_presence_records_raise_so_that_the_health_check_can_tell_an_outage() -> None:
    with pytest.raises(redis.ConnectionError):
        worker_presence.presence_records(url=f"redis://127.0.0.1:{free_port()}/0")


def test_the_describer_reads_the_consumers_queues_at_each_announcement() -> None:
    queues = [Queue("cpu")]
    consumer = SimpleNamespace(
        hostname="celery@host",
        task_consumer=SimpleNamespace(queues=queues),
        controller=SimpleNamespace(concurrency=3),
    )
    describe = consumer_describer(consumer, cuda=True, device_name="NVIDIA H100")
    first = describe()
    assert (first.hostname, first.queues, first.cuda, first.device_name, first.concurrency) == (
        "celery@host",
        ("cpu",),
        True,
        "NVIDIA H100",
        3,
    )
    queues.append(Queue("gpu"))  # `celery control add_consumer gpu`
    assert describe().queues == ("cpu", "gpu")
    assert WorkerPresence.from_json(first.to_json()) == first


def test_a_real_worker_announces_itself_and_withdraws_on_shutdown(
    celery_worker_process: CeleryWorkerProcess,
) -> None:
    # The fixture pointed settings.CELERY_BROKER_URL at the worker's Redis; the worker announces itself
    # once its CUDA probe (a child importing torch) has answered.
    assert wait_for(lambda: queue_has_live_worker("cpu"), timeout=60), celery_worker_process.log()
    (record,) = [w for w in live_workers() if w.hostname.startswith(celery_worker_process.hostname[:-2])]
    assert set(record.queues) == {"cpu", "gpu"}
    assert record.concurrency == 1
    assert celery_worker_process.process is not None
    assert record.pid == celery_worker_process.process.pid  # the main process announces, not a pool child
    assert gpu_worker_available() is record.cuda

    celery_worker_process.stop()  # SIGTERM: a warm shutdown sends worker_shutdown
    assert all(w.hostname != record.hostname for w in live_workers()), celery_worker_process.log()
