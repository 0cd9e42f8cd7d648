"""The server's answers while PostgreSQL is down or read-only: 503 with Retry-After, JSON under /api/
and the app's own page elsewhere, never a 500 and never gunicorn's bare "Internal Server Error".

A throwaway PostgreSQL cluster of its own (initdb on a free port, as scripts/test_postgres.sh makes one), the
app migrated into it with the demo sample (``demo_setup --sample``), and gunicorn serving it with the test
settings (DEBUG off, as in production). A researcher logs in and holds an API token; then the cluster is
stopped with ``pg_ctl -m immediate`` (a crash), and the API, logged-in pages and the log-in form are asked
again; then, started again, the database is made read-only (``default_transaction_read_only``, as during
maintenance) and a write is asked for.

Before a database outage was answered 503: ``GET /api/studies/`` answered ``500 {"detail": "Server error;
..."}`` without Retry-After (a refused connection carries no SQLSTATE), pages answered gunicorn's bare HTML
(the error page read the user, so the session, so the database, and raised itself), ``POST /accounts/login/``
500.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import requests

from tests.live_services import REPO_ROOT, free_port, gunicorn_server

pytestmark = pytest.mark.integration


def _pg_bin() -> Path:
    for folder in ["/usr/local/bin", *sorted(glob.glob("/usr/lib/postgresql/*/bin"))]:
        if os.access(f"{folder}/initdb", os.X_OK) and os.access(f"{folder}/pg_ctl", os.X_OK):
            return Path(folder)
    pytest.fail("initdb/pg_ctl not found: install Debian's postgresql package (scripts/setup.sh does)")


@dataclass
class Cluster:
    bin: Path
    folder: Path
    port: int
    owner: list[str]  # the command prefix that runs as the cluster's owner (postgres when we are root)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def pg_ctl(self, *arguments: str) -> None:
        subprocess.run([*self.owner, str(self.bin / "pg_ctl"), "-D", str(self.data), *arguments], check=True,
                       capture_output=True, timeout=120)  # fmt: skip

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        self.pg_ctl("-l", str(self.folder / "server.log"), "-w", "-t", "60", "-o", options, "start")

    def sql(self, statement: str, database: str = "postgres") -> None:
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="dialeval", dbname=database, autocommit=True
        ) as connection:
            connection.execute(statement)

    @property
    def url(self) -> str:
        return f"postgres://dialeval@127.0.0.1:{self.port}/outage"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    # Not under pytest's tmp_path: its root (/tmp/pytest-of-root) is closed to the postgres user.
    folder = Path(tempfile.mkdtemp(prefix="dialeval-pg-outage-", dir="/tmp"))
    owner: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(folder, "postgres")
        owner = ["runuser", "-u", "postgres", "--"]
    found = Cluster(_pg_bin(), folder, free_port(), owner)
    subprocess.run([*owner, str(found.bin / "initdb"), "-D", str(found.data), "-U", "dialeval", "-A", "trust",
                    "-E", "UTF8", "--locale=C.UTF-8"], check=True, capture_output=True, timeout=120)  # fmt: skip
    found.start()
    found.sql("CREATE DATABASE outage")
    try:
        yield found
    finally:
        subprocess.run([*owner, str(found.bin / "pg_ctl"), "-D", str(found.data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Server:
    base: str
    token: str  # the demo researcher's API token


@pytest.fixture(scope="module")
def app(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """gunicorn with the test settings on the cluster, the demo sample in it."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": cluster.url,
        "DIALEVAL_DATABASE_RETRY_AFTER_SECONDS": "7",
        "PYTHONPATH": str(REPO_ROOT),
    }
    for command in (["migrate", "--noinput"], ["demo_setup", "--sample"]):
        done = subprocess.run([sys.executable, "manage.py", *command], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
    token = re.search(r"researcher API token: (\w+)", done.stdout)
    assert token is not None, done.stdout
    port = free_port()
    log = Path(tmp_path_factory.mktemp("gunicorn")) / "web.log"
    arguments = ["--bind", f"127.0.0.1:{port}", "--workers", "1", "--timeout", "30"]
    with gunicorn_server(arguments, port=port, env=env, log=log) as base:
        yield Server(base, token.group(1))


def _logged_in(base: str) -> requests.Session:
    """A researcher's browser session, logged in through the form."""
    session = requests.Session()
    form = session.get(f"{base}/accounts/login/", timeout=10)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    assert token is not None
    answer = session.post(
        f"{base}/accounts/login/",
        data={"username": "researcher", "password": "researcher-demo", "csrfmiddlewaretoken": token.group(1)},
        headers={"Referer": f"{base}/accounts/login/"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text[:500]
    assert session.get(f"{base}/studies/", timeout=10).status_code == 200
    return session


def _assert_json_503(answer: requests.Response, words: str) -> None:
    assert answer.status_code == 503, (answer.status_code, answer.text[:300])
    assert answer.headers["Content-Type"].startswith("application/json")
    assert words in answer.json()["detail"]
    assert answer.headers["Retry-After"] == "7"


def _assert_page_503(answer: requests.Response) -> None:
    assert answer.status_code == 503, (answer.status_code, answer.text[:300])
    assert 'id="error-503"' in answer.text  # the app's own page, not gunicorn's
    assert answer.headers["Retry-After"] == "7"


def test_a_database_that_is_down_then_read_only_gets_503s_with_retry_after(
    cluster: Cluster, app: Server
) -> None:
    server = app.base
    session = _logged_in(server)
    api = {"Authorization": f"Token {app.token}", "Accept": "application/json"}
    assert requests.get(f"{server}/api/studies/", headers=api, timeout=10).status_code == 200
    csrf = session.cookies.get("csrftoken")
    cluster.pg_ctl("-m", "immediate", "stop")  # a crash: every connection refused
    try:
        _assert_json_503(requests.get(f"{server}/api/studies/", headers=api, timeout=20), "cannot be reached")
        _assert_json_503(
            requests.get(f"{server}/api/studies/1/correlations/", headers=api, timeout=20),
            "cannot be reached",
        )
        _assert_page_503(session.get(f"{server}/studies/", timeout=20))
        _assert_page_503(session.get(f"{server}/reports/1/", timeout=20))
        _assert_page_503(
            requests.post(
                f"{server}/accounts/login/",
                data={"username": "researcher", "password": "wrong", "csrfmiddlewaretoken": csrf},
                cookies={"csrftoken": csrf or ""},
                headers={"Referer": f"{server}/accounts/login/"},
                timeout=20,
            )
        )
    finally:
        cluster.start()
    assert requests.get(f"{server}/api/studies/", headers=api, timeout=20).status_code == 200
    # Maintenance: the database answers but takes no change. Reads go on, a write gets 503.
    cluster.sql("ALTER DATABASE outage SET default_transaction_read_only = on")
    try:
        assert requests.get(f"{server}/api/studies/", headers=api, timeout=20).status_code == 200
        created = requests.post(
            f"{server}/api/studies/",
            headers=api,
            json={"name": "during maintenance", "scale": "0-2"},
            timeout=20,
        )
        _assert_json_503(created, "read-only")
    finally:
        cluster.sql("ALTER DATABASE outage SET default_transaction_read_only = off")
