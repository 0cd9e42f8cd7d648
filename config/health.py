"""The health endpoints (django-health-check 4), for docker-compose healthchecks and monitoring.

- ``/health/``: the web process can serve: the database answers ``SELECT 1`` and the broker (Redis) answers
  a PING. The web container's healthcheck; it does not depend on any worker running.
- ``/health/workers/``: the broker answers, and every queue in ``DIALEVAL_HEALTH_QUEUES`` has a live worker
  (``scoring.worker_presence``: the key a worker refreshes every few seconds). For monitoring: it fails
  while a queue's work would wait for a worker that is not there. Every other queue a live worker consumes
  is listed too (as OK), so that the page shows what the workers serve, not only what is required.

Both answer without a login; ``?format=json`` (or ``Accept: application/json``) gives one entry per check,
"OK" or the error, with status 200 when every check passed and 500 otherwise. No check names a password:
the Redis check shows host, port and database only. Every check gives up within about a second.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Generator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from health_check.base import HealthCheck
from health_check.checks import Database
from health_check.contrib.redis import Redis
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from scoring import worker_presence

BROKER_TIMEOUT_SECONDS = 1.0


def broker_client() -> AsyncRedis:
    """A client for the broker, made at each check, so that it follows the settings of the moment."""
    return AsyncRedis.from_url(
        worker_presence.broker_url(),
        socket_timeout=BROKER_TIMEOUT_SECONDS,
        socket_connect_timeout=BROKER_TIMEOUT_SECONDS,
        retry=Retry(NoBackoff(), 0),  # redis-py retries three times by default
    )


def broker_check() -> Redis:
    return Redis(client_factory=broker_client)


@dataclasses.dataclass
class QueueWorker(HealthCheck):
    """A live worker consumes ``queue`` (its presence key has not expired)."""

    queue: str
    timeout = datetime.timedelta(seconds=1)  # a class attribute, not a field: the presence read's budget

    def run(self) -> None:
        try:
            workers = worker_presence.presence_records()
        except (RedisError, OSError) as error:
            raise ServiceUnavailable("the broker holding the worker records is unreachable") from error
        if not any(self.queue in worker.queues for worker in workers):
            raise ServiceUnavailable(f"no live worker consumes the {self.queue!r} queue")


def served_queues() -> list[str]:
    """Every queue some live worker consumes, sorted; [] when the broker cannot be read (the configured
    queues' checks then say so)."""
    return sorted({queue for worker in worker_presence.live_workers() for queue in worker.queues})


class WorkerHealthView(HealthCheckView):
    """``/health/workers/``: the queues the settings require, read at each request, then every other queue a
    live worker consumes (issue 34: a worker on cpu,gpu showed as the cpu queue alone)."""

    served: list[str]

    async def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Read here, in a thread, because get_checks runs on the event loop, which a blocking Redis read
        # would hold up; the checks then reread the records within their own time budget.
        self.served = await sync_to_async(served_queues, thread_sensitive=False)()
        response: HttpResponse = await super().get(request, *args, **kwargs)
        return response

    def get_checks(self) -> Generator[HealthCheck, None, None]:
        yield broker_check()
        required = list(dict.fromkeys(settings.DIALEVAL_HEALTH_QUEUES))
        for queue in [*required, *(queue for queue in self.served if queue not in required)]:
            yield QueueWorker(queue=queue)


web_health = HealthCheckView.as_view(checks=[Database, (Redis, {"client_factory": broker_client})])
worker_health = WorkerHealthView.as_view()
