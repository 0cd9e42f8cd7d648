"""The health endpoints (django-health-check 4), for docker-compose healthchecks and monitoring.

- ``/health/``: the web process can serve: the database answers ``SELECT 1`` and the broker (Redis) answers
  a PING. The web container's healthcheck; it does not depend on any worker running.
- ``/health/workers/``: the broker answers, and every queue in ``DIALEVAL_HEALTH_QUEUES`` has a live worker
  (``scoring.worker_presence``: the key a worker refreshes every few seconds). For monitoring: it fails
  while a queue's work would wait for a worker that is not there. Every other queue a live worker consumes
  is listed too (as OK), so that the page shows what the workers serve, not only what is required.

Both answer without a login; ``?format=json`` (or ``Accept: application/json``) gives one entry per check,
"OK" or the error, with status 200 when every check passed and 500 otherwise. Every check gives up within
about a second. No answer names a password. Only staff (logged in) and requests with the token
``DIALEVAL_HEALTH_TOKEN`` (``Authorization: Bearer <token>``) see the details: the Redis check's host, port
and database, and the database's own error (which names its host and port). Everyone else sees each check by
its name alone (``Redis()``, ``Database(alias='default')``, ``QueueWorker(queue='cpu')``), and the error of
the database or of Redis as a sentence that names neither (``PUBLIC_ERRORS``).
"""

from __future__ import annotations

import dataclasses
import datetime
import hmac
from collections.abc import Generator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
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


# What a check's labels say about where its service runs: left out of what anonymous callers see.
ADDRESS_LABELS = frozenset({"host", "port", "db", "hosts"})
# The error anonymous callers see for these checks (by class name): the database's own names its host and port.
PUBLIC_ERRORS = {"Database": "the database does not answer", "Redis": "the broker does not answer"}


@dataclasses.dataclass
class Public(HealthCheck):
    """``check`` as callers without the details see it: its name and labels without an address, its error
    (``PUBLIC_ERRORS``) without one either. It runs ``check`` itself, within that check's own time budget."""

    check: HealthCheck = dataclasses.field(repr=False)

    def __post_init__(self) -> None:
        self.timeout = self.check.timeout + datetime.timedelta(seconds=1)  # the inner check times out first

    async def run(self) -> None:
        error = (await self.check.get_result()).error
        if error is not None:
            message = PUBLIC_ERRORS.get(type(self.check).__name__, error.message)
            raise type(error)(message, timestamp=error.timestamp)

    @property
    def labels(self) -> dict[str, str]:
        return {key: value for key, value in self.check.labels.items() if key not in ADDRESS_LABELS}

    def __repr__(self) -> str:
        labels = self.labels
        name = labels.pop("check")
        return f"{name}({', '.join(f'{key}={value!r}' for key, value in labels.items())})"


async def sees_details(request: HttpRequest) -> bool:
    """Whether ``request`` may see where the services run: it carries ``DIALEVAL_HEALTH_TOKEN`` as a bearer
    token, or comes from a logged-in staff member. A database that cannot load the session means no."""
    token: str = settings.DIALEVAL_HEALTH_TOKEN
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if token and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
        return True
    if settings.SESSION_COOKIE_NAME not in request.COOKIES:
        return False
    try:
        user = await request.auser()
    except DatabaseError:
        return False
    return bool(user.is_staff and user.is_active)


class HealthView(HealthCheckView):
    """A health endpoint whose checks are shown in detail to staff and to the token's holders only."""

    detailed = False

    async def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self.detailed = await sees_details(request)
        response: HttpResponse = await super().get(request, *args, **kwargs)
        patch_vary_headers(response, ["Authorization", "Cookie"])
        return response

    def checks_in_detail(self) -> Generator[HealthCheck, None, None]:
        yield from super().get_checks()

    def get_checks(self) -> Generator[HealthCheck, None, None]:
        for check in self.checks_in_detail():
            yield check if self.detailed else Public(check=check)


class WorkerHealthView(HealthView):
    """``/health/workers/``: the queues the settings require, read at each request, then every other queue a
    live worker consumes (a worker on cpu,gpu showed as the cpu queue alone)."""

    served: list[str]

    async def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Read here, in a thread, because get_checks runs on the event loop, which a blocking Redis read
        # would hold up; the checks then reread the records within their own time budget.
        self.served = await sync_to_async(served_queues, thread_sensitive=False)()
        response: HttpResponse = await super().get(request, *args, **kwargs)
        return response

    def checks_in_detail(self) -> Generator[HealthCheck, None, None]:
        yield broker_check()
        required = list(dict.fromkeys(settings.DIALEVAL_HEALTH_QUEUES))
        for queue in [*required, *(queue for queue in self.served if queue not in required)]:
            yield QueueWorker(queue=queue)


web_health = HealthView.as_view(checks=[Database, (Redis, {"client_factory": broker_client})])
worker_health = WorkerHealthView.as_view()
