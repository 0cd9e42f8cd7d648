"""A guard around one kombu bug that killed Celery workers when Redis went away.

When the broker connection drops, Celery's consumer closes it (``ignore_errors(connection,
connection.close)``), which closes the default channel, which restores the unacknowledged messages, which
opens a Redis client from the connection's parameters. kombu 5.x may clear the transport's ``client`` (the
kombu Connection) before that channel is closed; ``Channel._connparams`` then fails with
``AttributeError: 'NoneType' object has no attribute 'hostname'``. ``ignore_errors`` lets only connection
errors through, so the AttributeError ended the worker's consumer: the worker process died mid-outage
(tests/integration/test_scoring_redis_outage.py, about one run in five on this machine).

With this guard the same moment raises redis's ConnectionError, a connection error kombu expects there:
the close goes on, the consumer reconnects once Redis is back, and the unacknowledged messages are restored
as after any other lost connection. Imported by config/celery_app.py, so every worker and every sender has it.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

_connparams = kombu_redis.Channel._connparams


def _connparams_or_connection_error(self: Any, asynchronous: bool = False) -> Any:
    if getattr(self.connection, "client", None) is None:
        raise RedisConnectionError("the broker connection was closed while one of its channels was closing")
    return _connparams(self, asynchronous=asynchronous)


kombu_redis.Channel._connparams = _connparams_or_connection_error  # type: ignore[method-assign]
