"""kernel/kombu_close_guard.py: closing a Redis channel whose connection lost its client raises a connection
error, which kombu's ``ignore_errors`` (what Celery's consumer closes a lost connection with) lets pass,
instead of the AttributeError that ended the worker's consumer mid-outage."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kombu import Connection
from kombu.common import ignore_errors
from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

import config.celery_app  # noqa: F401  (installs the guard, as every worker does)


def test_a_channel_without_its_connections_client_raises_a_connection_error():
    orphan = SimpleNamespace(connection=SimpleNamespace(client=None, default_port=6379))
    with pytest.raises(RedisConnectionError):
        kombu_redis.Channel._connparams(orphan)  # type: ignore[arg-type]
    connection = Connection("redis://127.0.0.1:1/0")  # no broker needed: only its error classes are read
    # What Celery's consumer does with a lost connection: the error passes, where the AttributeError escaped.
    ignore_errors(connection, kombu_redis.Channel._connparams, orphan)
