"""What a real gunicorn, started as the compose web service and `make run` start it
(``gunicorn -c python:config.gunicorn_conf config.wsgi:application``), puts in its answers' headers: no
``Server`` header (gunicorn has no setting for it; config/gunicorn_conf.py drops it), and the app's own
headers (Content-Security-Policy, Cache-Control) pass through it."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.live_services import free_port, gunicorn_server

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "PYTHONPATH": str(REPO),
    }
    log = tmp_path_factory.mktemp("gunicorn") / "web.log"
    with gunicorn_server(
        ["-c", "python:config.gunicorn_conf"], port=port, env=env, log=log, ready_path="/favicon.ico"
    ) as base:
        yield base


@pytest.mark.parametrize("path", ["/favicon.ico", "/no-such-page/", "/api/studies/"])
def test_no_server_header_and_the_apps_headers_come_through(server: str, path: str) -> None:
    answer = requests.get(f"{server}{path}", timeout=10, allow_redirects=False)
    assert answer.status_code in {302, 401, 404}, answer.status_code
    assert "Server" not in answer.headers, answer.headers.get("Server")
    assert "default-src 'self'" in answer.headers["Content-Security-Policy"]
    if path.startswith("/api/"):
        assert "no-store" in answer.headers["Cache-Control"]


def test_gunicorns_own_error_answer_names_no_server(server: str) -> None:
    """A request gunicorn refuses itself (a header line past its limit) never reaches the app."""
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n")
        head = connection.recv(65536).split(b"\r\n\r\n", 1)[0].decode("latin-1")
    assert head.startswith("HTTP/1.1 4"), head
    assert "\r\nserver:" not in head.lower(), head
