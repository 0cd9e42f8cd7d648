"""Queue a Celery task from a web request without waiting on a broker that is down.

Celery's own publishing blocks the request when Redis is down: with ``retry=False`` kombu still opens the
producer's channel through ``Connection.default_channel``, which retries the connection every 2 s until
``broker_connection_timeout`` (4 s) has passed, about 6 s in all; the default retry policy costs 0.6 s of
sleeps before it gives up. :func:`task_publish` sends with a retry policy of one immediate retry (enough
to replace a pooled connection that a Redis restart closed) and returns False at once when the broker
cannot be reached, so the caller can record that the work is still to be queued.

A broker that accepts connections but does not answer (a hung or paused Redis) is bounded by the
``socket_timeout`` in ``CELERY_BROKER_TRANSPORT_OPTIONS`` (config/settings/base.py), per attempt.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from celery import current_app
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

# Passed to kombu's Connection.ensure; with a broker that refuses connections this fails within a few
# hundredths of a second (measured: 0.01-0.06 s), where Celery's default policy takes 0.6 s and retry=False 6 s.
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
# What a broker that is down or hung raises: kombu wraps the transport's connection errors in its
# OperationalError; socket-level errors and redis-py's own are listed in case one escapes unwrapped.
BROKER_UNAVAILABLE_ERRORS = (OperationalError, RedisConnectionError, RedisTimeoutError, OSError)


def task_publish(
    name: str,
    *,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    queue: str | None = None,
) -> bool:
    """Send the registered task ``name`` with ``args``/``kwargs`` to ``queue``: True when the broker took the
    message, False (with a warning logged) when it could not be reached. Other errors (a message that cannot
    be serialized, say) propagate. Tasks are always sent by name, so a sender never imports the module that
    defines the task (the one way to send tasks, docs/architecture.md)."""
    options: dict[str, Any] = {"queue": queue, "retry": True, "retry_policy": PUBLISH_RETRY_POLICY}
    try:
        current_app.send_task(name, args=tuple(args), kwargs=dict(kwargs or {}), **options)
    except BROKER_UNAVAILABLE_ERRORS as error:
        logger.warning(
            "could not queue %s%r: broker unreachable (%s: %s)",
            name,
            tuple(args),
            type(error).__name__,
            error,
        )
        return False
    return True
