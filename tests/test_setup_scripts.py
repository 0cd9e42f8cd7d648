"""`make run` end to end: scripts/run_local.sh serves the app, and a Ctrl-C leaves nothing behind.

The script starts redis-server, a Celery worker (with its pool processes) and the web server in their own
process groups; the test sends SIGINT to the script's process group, as a terminal's Ctrl-C does, then
checks that every process the script started has exited and both ports are closed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.integration
# The script's own defaults must apply (the test runner may have set these for itself).
INHERITED_BUT_OVERRIDDEN = {"REDIS_URL", "REDIS_PORT", "DJANGO_SETTINGS_MODULE", "DIALEVAL_VAR_DIR"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (through /proc; setsid keeps the parent link)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_and_interrupt(
    tmp_path: Path, extra_env: dict[str, str], stop: signal.Signals = signal.SIGINT
) -> tuple[set[int], str]:
    """Start run_local.sh, check the app answers, Ctrl-C it (or send ``stop``: SIGTERM stops a background
    run, which ignores SIGINT); return what it had started and its output."""
    web_port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in INHERITED_BUT_OVERRIDDEN}
    env |= {
        "WEB_PORT": str(web_port),
        "DIALEVAL_VAR_DIR": str(tmp_path / "var"),  # its own SQLite file, logs and Redis folder
        "DIALEVAL_SHARED_DATA": str(tmp_path / "no-shared-data"),  # demo_setup's small built-in sample
        **extra_env,
    }
    log_path = tmp_path / "run.log"
    with log_path.open("w") as log:
        # A session of its own: the test plays the terminal, whose Ctrl-C signals the whole foreground group.
        script = subprocess.Popen(
            ["bash", "scripts/run_local.sh"],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # A terminal's shell gets Ctrl-C with the default disposition. When the test run itself was
            # started in the background (`cmd &` ignores SIGINT, and the ignore is inherited), bash could not
            # trap an INT it found ignored on entry, and the script would never see the test's Ctrl-C.
            preexec_fn=_default_sigint,
        )
    started: set[int] = set()
    try:
        deadline = time.monotonic() + 240
        while "dialeval is running" not in log_path.read_text():
            assert script.poll() is None, f"run_local.sh exited early:\n{log_path.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"no 'running' banner:\n{log_path.read_text()[-3000:]}"
            time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/accounts/login/", timeout=10) as response:
            assert response.status == 200
        # The banner comes when the web server answers; the worker forks its pool a little later. Take the
        # snapshot of what the script started once the worker says it is ready, so the pool is in it.
        worker_log = tmp_path / "var" / "log" / "worker.log"
        while not (worker_log.exists() and " ready." in worker_log.read_text()):
            assert time.monotonic() < deadline, f"worker never ready:\n{worker_log.read_text()[-3000:]}"
            time.sleep(0.5)
        started = descendants(script.pid)
        commands = command_lines(started)
        if stop == signal.SIGINT:
            os.killpg(script.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole foreground group
        else:
            os.kill(script.pid, stop)  # `kill -TERM <pid>` of the script, as its banner says
        assert script.wait(timeout=60) == 128 + stop  # the script's own trap
    finally:
        if script.poll() is None:  # only when an assertion above failed: do not leave the app running
            os.killpg(script.pid, signal.SIGTERM)
            script.wait(timeout=60)
    output = log_path.read_text()
    left = {pid for pid in started if alive(pid)}
    left_commands = command_lines(left)
    for pid in left:  # a failing run must not leave its services behind for the next test
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"still running after Ctrl-C:\n{left_commands}\n{output[-3000:]}"
    assert not port_open(web_port)
    assert "[run] stopped" in output
    assert "gunicorn -c python:config.gunicorn_conf config.wsgi:application" in commands  # not runserver
    assert "runserver" not in commands
    return started, output


def command_lines(pids: set[int]) -> str:
    lines = []
    for pid in pids:
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " "))
        except OSError:  # exited since: nothing to read, which the caller's assertions then show
            continue
    return "\n".join(lines)


def shared_data_with_dailydialog(tmp_path: Path) -> str:
    """A shared-data folder whose DailyDialog train/ is there (empty), so the script's only reason not to start
    training the default models is DIALEVAL_TRAIN_DEFAULT_MODELS=0; demo_setup uses its own sample (no
    multirefeval)."""
    shared = tmp_path / "shared-data"
    (shared / "dailydialog" / "train").mkdir(parents=True)
    return str(shared)


def test_run_script_serves_the_app_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    redis_port = free_port()
    started, output = run_and_interrupt(
        tmp_path,
        {
            "REDIS_PORT": str(redis_port),
            "DIALEVAL_SHARED_DATA": shared_data_with_dailydialog(tmp_path),
            "DIALEVAL_TRAIN_DEFAULT_MODELS": "0",
        },
    )
    assert f"starting redis-server on 127.0.0.1:{redis_port}" in output
    assert "starting Celery beat, the periodic recovery check" in output
    assert "stopping beat (process group" in output
    assert not port_open(redis_port)  # the Redis it started is gone too
    assert len(started) >= 5  # redis-server, the Celery main process and its pool, beat, gunicorn
    # The demo logins and the token close the start-up output, in the banner, not in the middle of the log.
    banner = output[output.index("dialeval is running") :]
    assert "researcher login: researcher / researcher-demo" in banner
    assert "researcher API token: " in banner
    assert "researcher login" not in output[: output.index("dialeval is running")]
    assert banner.index("researcher API token") < banner.index("[run] stopping")
    # with DIALEVAL_TRAIN_DEFAULT_MODELS=0 no training starts, so no log of it is pointed to.
    assert "train-default-models.log" not in output


def test_a_background_run_reuses_a_running_redis_stops_on_sigterm_and_leaves_that_redis_running(
    tmp_path: Path,
) -> None:
    """Three behaviours of one start (each start of the whole app costs about 20 s of the suite): a run in the
    background stops on SIGTERM, as its banner says, a Redis that already answers is reused, not stopped, and
    the banner points to the log of the default models' training when that training is started (with an
    empty DailyDialog train/ folder it fails at once, which is not what this test is about)."""
    redis_port = free_port()
    redis = subprocess.Popen(
        [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(redis_port),
            "--save",
            "",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while not port_open(redis_port):
            assert time.monotonic() < deadline, "the test's own redis-server did not start"
            time.sleep(0.1)
        started, output = run_and_interrupt(
            tmp_path,
            {
                "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
                "DIALEVAL_SHARED_DATA": shared_data_with_dailydialog(tmp_path),
            },
            stop=signal.SIGTERM,
        )
        assert "in the background: kill -TERM " in output
        banner = output[output.index("dialeval is running") :]
        assert "training any missing default" in output
        assert "default models: " in banner
        assert f"{tmp_path / 'var' / 'log' / 'train-default-models.log'}" in banner
        assert len(started) >= 4  # the Celery main process and its pool, beat, gunicorn (no redis-server)
        assert "reusing the Redis already answering" in output
        assert redis.poll() is None, "run_local.sh stopped a Redis it did not start"
    finally:
        redis.terminate()
        redis.wait(timeout=15)
