"""Rate limits (issue 24): the API (DRF throttles), bad API tokens, sign-ups, and log-in lock-out (django-axes).

Every limit answers 429 with ``Retry-After`` (seconds). Counters live in the ``rate_limits`` cache (Redis in
``make run`` and production, so every gunicorn worker shares them); when that cache is unreachable the
limits let requests through rather than failing them (and log it once a minute): Redis being down must not
take the site down with it. Rates are DRF's syntax, ``"<count>/<second|minute|hour|day>"``, read from the
settings on every check so tests can lower them with ``override_settings``.

The client is ``REMOTE_ADDR``, or, behind ``DIALEVAL_TRUSTED_PROXIES`` reverse proxies, the address that
many hops from the right of ``X-Forwarded-For`` (what the outermost proxy saw), as DRF's ``NUM_PROXIES``.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from rest_framework import authentication, exceptions, throttling
from rest_framework.request import Request

log = logging.getLogger(__name__)
CACHE_ALIAS = "rate_limits"
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_last_outage_log = 0.0


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int


def parse_rate(text: str | None) -> Rate | None:
    """``"20/minute"`` -> Rate(20, 60); None or "" -> no limit."""
    if not text:
        return None
    count, _, period = text.partition("/")
    return Rate(int(count), PERIODS[period.strip()[0].lower()])


def client_ip(request: HttpRequest | Request) -> str:
    """The client's address, looking past ``DIALEVAL_TRUSTED_PROXIES`` proxies (see the module docstring);
    "unknown" when the request carries none (a request made in code)."""
    meta = request.META
    proxies = int(getattr(settings, "DIALEVAL_TRUSTED_PROXIES", 0))
    forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
    if proxies > 0 and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops and _is_address(hops[-min(proxies, len(hops))]):
            return hops[-min(proxies, len(hops))]
    remote = str(meta.get("REMOTE_ADDR") or "")
    return remote if _is_address(remote) else "unknown"


def login_client_ip(request: HttpRequest) -> str | None:
    """AXES_CLIENT_IP_CALLABLE: the same address, or None (axes stores it in an IP address column)."""
    address = client_ip(request)
    return None if address == "unknown" else address


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _outage(error: Exception) -> None:
    global _last_outage_log
    if time.monotonic() - _last_outage_log > 60:
        _last_outage_log = time.monotonic()
        log.warning("rate limits not applied: their cache is unreachable (%s)", error)


def rate_limit_hit(key: str, rate: Rate | None) -> int | None:
    """Count one hit of ``key`` in the current window of ``rate``; the seconds to wait when over the limit,
    else None. Fixed windows: the counter's key names the window, so it needs no expiry bookkeeping."""
    if rate is None:
        return None
    now = time.time()
    window = int(now // rate.seconds)
    cache_key = f"dialeval:rate:{key}:{rate.seconds}:{window}"
    cache = caches[CACHE_ALIAS]
    try:
        hits = 1 if cache.add(cache_key, 1, timeout=rate.seconds + 1) else cache.incr(cache_key)
    except ValueError:  # the key expired between add and incr: this hit opens a window again
        hits = 1
    except Exception as error:  # the cache (Redis) is down: no limit rather than no site
        _outage(error)
        return None
    if hits <= rate.count:
        return None
    return max(1, math.ceil((window + 1) * rate.seconds - now))


def too_many_requests(request: HttpRequest, retry_after: int, detail: str) -> HttpResponse:
    """429 with Retry-After: JSON under /api/, else the 429 page."""
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": detail}, status=429)
    else:
        response = HttpResponse(loader.render_to_string("429.html", {"detail": detail}, request), status=429)
    response["Retry-After"] = str(retry_after)
    return response


def wait_text(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} seconds"
    return f"{math.ceil(seconds / 60)} minutes"


# --- sign-up -------------------------------------------------------------------------------------------


def signup_retry_after(request: HttpRequest, *, invite: str) -> int | None:
    """Count a new account made through ``invite`` (sign-up form or crowd link) by this client; the seconds
    to wait when this client, or this invite link, made too many lately."""
    waits = [
        rate_limit_hit(
            f"signup-client:{client_ip(request)}", parse_rate(settings.DIALEVAL_SIGNUP_RATE_CLIENT)
        ),
        rate_limit_hit(f"signup-invite:{invite}", parse_rate(settings.DIALEVAL_SIGNUP_RATE_INVITE)),
    ]
    found = [wait for wait in waits if wait is not None]
    return max(found) if found else None


def signup_refused(request: HttpRequest, retry_after: int) -> HttpResponse:
    return too_many_requests(
        request,
        retry_after,
        f"Too many accounts were made from here or through this invite link lately; try again in "
        f"{wait_text(retry_after)}.",
    )


# --- the API (DRF) -------------------------------------------------------------------------------------


class _SettingsRateThrottle(throttling.SimpleRateThrottle):
    """A DRF throttle whose rate is read from a setting at each request (not frozen at import), kept in the
    ``rate_limits`` cache, that lets requests through while that cache is down."""

    rate_setting = ""

    def __init__(self) -> None:
        self.cache = caches[CACHE_ALIAS]
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)

    def get_rate(self) -> str | None:
        return getattr(settings, self.rate_setting, None) or None  # "" is no limit too

    def get_ident(self, request: Request) -> str:
        return client_ip(request)

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception as error:
            _outage(error)
            return True


class ApiUserThrottle(_SettingsRateThrottle):
    """Requests per authenticated user (``DIALEVAL_API_RATE_USER``)."""

    scope = "user"
    rate_setting = "DIALEVAL_API_RATE_USER"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class ApiAnonThrottle(_SettingsRateThrottle):
    """Requests per client address without a login (``DIALEVAL_API_RATE_ANON``)."""

    scope = "anon"
    rate_setting = "DIALEVAL_API_RATE_ANON"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ThrottledTokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``; a client that sends too many bad tokens
    (``DIALEVAL_API_RATE_BAD_TOKENS``) gets 429 before its next token is even looked up."""

    def authenticate(self, request: Request) -> Any:
        key = f"bad-token:{client_ip(request)}"
        rate = parse_rate(settings.DIALEVAL_API_RATE_BAD_TOKENS)
        blocked = _blocked_for(key, rate)
        if blocked is not None and authentication.get_authorization_header(request):
            raise exceptions.Throttled(wait=blocked)
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            wait = rate_limit_hit(key, rate)
            if wait is not None:
                raise exceptions.Throttled(wait=wait) from None
            raise


def _blocked_for(key: str, rate: Rate | None) -> int | None:
    """The seconds left when ``key`` is over ``rate`` in the current window (without counting a hit)."""
    if rate is None:
        return None
    now = time.time()
    window = int(now // rate.seconds)
    try:
        hits = caches[CACHE_ALIAS].get(f"dialeval:rate:{key}:{rate.seconds}:{window}", 0)
    except Exception as error:
        _outage(error)
        return None
    if int(hits) < rate.count:
        return None
    return max(1, math.ceil((window + 1) * rate.seconds - now))


# --- log-in lock-out (django-axes) ---------------------------------------------------------------------


def login_locked_out(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: 429 with Retry-After (the cool-off) instead of axes' plain 429."""
    from axes.helpers import get_cool_off

    cool_off = get_cool_off(request)
    seconds = max(1, int(cool_off.total_seconds())) if cool_off else 3600
    return too_many_requests(
        request,
        seconds,
        f"Too many failed log-ins for this account from here; try again in {wait_text(seconds)}.",
    )
