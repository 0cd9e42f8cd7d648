"""Rate limits: the API (DRF throttles), bad API tokens, sign-ups, and log-in lock-out (django-axes).

Every limit answers 429 with ``Retry-After`` (seconds). Counters live in the ``rate_limits`` cache (Redis in
``make run`` and production, so every gunicorn worker shares them); when that cache is unreachable the
limits let requests through rather than failing them (and log it once a minute): Redis being down must not
take the site down with it. Rates are DRF's syntax, ``"<count>/<second|minute|hour|day>"``, read from the
settings on every check so tests can lower them with ``override_settings``.

The client is ``REMOTE_ADDR``, or, behind ``DIALEVAL_TRUSTED_PROXIES`` reverse proxies, the address that
many hops from the right of ``X-Forwarded-For`` (what the outermost proxy saw), as DRF's ``NUM_PROXIES``.

Windows slide: a limit of N per period counts the hits of the last period in ``SLOTS`` slots,
the oldest one whole, so no span of one period ever holds more than N allowed hits (a fixed window lets N
through at the end of one window and N more at the start of the next), at the price of a Retry-After up to
one slot longer than the period. Refused hits are not counted, so a client that waits its Retry-After gets
in. API answers the throttles govern carry the budget as ``RateLimit-Limit``, ``RateLimit-Remaining`` and
``RateLimit-Reset`` (see ``expose_budget``).
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from rest_framework import authentication, exceptions, throttling
from rest_framework.request import Request

log = logging.getLogger(__name__)
CACHE_ALIAS = "rate_limits"
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Slots per period: more slots make the Retry-After closer to the period but cost more keys read per check
# (one get_many of SLOTS + 1 keys); 20 keeps the overshoot at 5 % (3 s of a minute, 3 minutes of an hour).
SLOTS = 20
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


@dataclass(frozen=True)
class Budget:
    """Where one key stands against its rate."""

    limit: int
    remaining: int  # hits still allowed now
    # Seconds until the oldest counted hit leaves the window, so that ``remaining`` grows (0: none counted).
    reset: int
    retry_after: int | None  # when this hit was refused: the seconds until one more is allowed

    @property
    def refused(self) -> bool:
        return self.retry_after is not None


def rate_limit_budget(key: str, rate: Rate | None, *, count: bool = True) -> Budget | None:
    """Count one hit of ``key`` against ``rate`` unless it is over the limit (with ``count=False``, only say
    whether one more would be allowed); None when there is no limit or the cache is down.

    The hit is counted before the window is read and taken back when it is over the limit: two processes
    counting at once may then both be refused, never both let through past the limit."""
    if rate is None:
        return None
    now = time.time()
    size = rate.seconds / SLOTS
    current = math.floor(now / size)
    # The slots from the oldest that still overlaps the last period, counted whole, to the current one.
    keys = [f"dialeval:slots:{key}:{rate.seconds}:{index}" for index in range(current - SLOTS, current + 1)]
    cache = caches[CACHE_ALIAS]
    try:
        if count:
            _add_one(cache, keys[-1], timeout=math.ceil(rate.seconds + 2 * size))
        found = cache.get_many(keys)
        counts = [int(found.get(slot_key) or 0) for slot_key in keys]
        total = sum(counts)
        refused = total > rate.count if count else total + 1 > rate.count
        if refused and count:
            _take_one_back(cache, keys[-1])
            counts[-1] = max(0, counts[-1] - 1)
            total -= 1
    except Exception as error:  # the cache (Redis) is down: no limit rather than no site
        _outage(error)
        return None

    def leaves(slot: int) -> int:  # seconds until slot ``slot`` of ``counts`` stops counting
        return max(1, math.ceil((current + slot + 1) * size - now))

    oldest = next((slot for slot, hits in enumerate(counts) if hits), None)
    retry_after = None
    if refused:
        retry_after = rate.seconds  # a limit of 0 never lets one through
        left = total
        for slot, hits in enumerate(counts):
            left -= hits
            if left + 1 <= rate.count:
                retry_after = leaves(slot)
                break
    return Budget(
        limit=rate.count,
        remaining=max(0, rate.count - total),
        reset=0 if oldest is None else leaves(oldest),
        retry_after=retry_after,
    )


def _add_one(cache: Any, key: str, *, timeout: int) -> None:
    if cache.add(key, 1, timeout=timeout):
        return
    try:
        cache.incr(key)
    except ValueError:  # the key expired between add and incr
        cache.add(key, 1, timeout=timeout)


def _take_one_back(cache: Any, key: str) -> None:
    with contextlib.suppress(ValueError):  # expired meanwhile: nothing left to take back
        cache.decr(key)


def rate_limit_hit(key: str, rate: Rate | None) -> int | None:
    """Count one hit of ``key``; the seconds to wait when it is over ``rate``, else None."""
    budget = rate_limit_budget(key, rate)
    return None if budget is None else budget.retry_after


def expose_budget(view: Any, budget: Budget | None) -> None:
    """Put ``budget`` on the answer of the DRF ``view`` (its ``headers`` go onto every answer, errors and
    429s included), unless a tighter budget is there already.

    The names are those of the IETF httpapi draft (draft-ietf-httpapi-ratelimit-headers up to -06), with
    ``RateLimit-Reset`` in seconds from now as it says: the ``X-RateLimit-*`` headers have no one meaning
    (GitHub's reset is a Unix time, others' a number of seconds), an X- prefix is discouraged for new
    headers (RFC 6648), and seconds need no agreement between the clocks of client and server."""
    headers = getattr(view, "headers", None)
    if budget is None or not isinstance(headers, dict):
        return
    shown: Budget | None = getattr(view, "_dialeval_budget", None)
    if shown is not None and (shown.remaining, not shown.refused) <= (budget.remaining, not budget.refused):
        return
    view._dialeval_budget = budget
    headers["RateLimit-Limit"] = str(budget.limit)
    headers["RateLimit-Remaining"] = str(budget.remaining)
    headers["RateLimit-Reset"] = str(budget.reset)


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


class _SettingsRateThrottle(throttling.BaseThrottle):
    """A DRF throttle on the sliding windows above, whose rate is read from a setting at each request (not
    frozen at import), that lets requests through while the ``rate_limits`` cache is down and puts the
    budget on the answer."""

    scope = ""
    rate_setting = ""

    def __init__(self) -> None:
        self.budget: Budget | None = None

    def get_ident(self, request: Request) -> str:
        return client_ip(request)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Request, view: Any) -> bool:
        key = self.get_cache_key(request, view)
        rate = parse_rate(getattr(settings, self.rate_setting, None))  # "" is no limit too
        if key is None or rate is None:
            return True
        self.budget = rate_limit_budget(f"throttle:{self.scope}:{key}", rate)
        expose_budget(view, self.budget)
        return self.budget is None or not self.budget.refused

    def wait(self) -> float | None:
        return None if self.budget is None else self.budget.retry_after


class ApiUserThrottle(_SettingsRateThrottle):
    """Requests per authenticated user (``DIALEVAL_API_RATE_USER``)."""

    scope = "user"
    rate_setting = "DIALEVAL_API_RATE_USER"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not (request.user and request.user.is_authenticated):
            return None
        return str(request.user.pk)


class ApiAnonThrottle(_SettingsRateThrottle):
    """Requests per client address without a login (``DIALEVAL_API_RATE_ANON``)."""

    scope = "anon"
    rate_setting = "DIALEVAL_API_RATE_ANON"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return self.get_ident(request)


class ThrottledTokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``, with bad tokens limited (``DIALEVAL_API_RATE_BAD_TOKENS``) per client
    across tokens and per token and client, never a valid token: behind a proxy (or one NAT) many users
    share an address, and one of them sending bad tokens must not lock the others out.

    Past the client's limit its further bad tokens get 429 instead of 401, after the look-up that tells them
    from valid ones (one indexed query, as for any request with a token; a token has 160 random bits, so
    the answer is no oracle worth guessing against); a token refused that often from that client is
    refused without a look-up."""

    def authenticate(self, request: Request) -> Any:
        header = authentication.get_authorization_header(request)
        words = header.split()
        if not words or words[0].lower() != self.keyword.lower().encode():
            return None  # not a token: another authentication class's business
        rate = parse_rate(settings.DIALEVAL_API_RATE_BAD_TOKENS)
        client = f"bad-token:{client_ip(request)}"
        this_token = f"{client}:{hashlib.sha256(header).hexdigest()[:32]}"
        view = (request.parser_context or {}).get("view")
        known_bad = rate_limit_budget(this_token, rate, count=False)
        if known_bad is not None and known_bad.refused:
            expose_budget(view, known_bad)
            raise exceptions.Throttled(wait=known_bad.retry_after)
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            budget = rate_limit_budget(client, rate)
            expose_budget(view, budget)
            if budget is not None and budget.refused:
                raise exceptions.Throttled(wait=budget.retry_after) from None
            # Counted per token only when counted for the client: a token is never over while its client
            # is under, so the look-up is skipped only for tokens the client check would refuse anyway.
            rate_limit_budget(this_token, rate)
            raise


# --- log-in lock-out (django-axes) ---------------------------------------------------------------------


class LoginAttemptsHandler(AxesDatabaseHandler):
    """AXES_HANDLER: django-axes' lock-out of a username from a client, plus a limit on failed log-ins per
    client across usernames (``DIALEVAL_LOGIN_FAILURE_RATE_CLIENT``; OWASP ASVS 2.2.1): one password tried
    on many usernames never reaches axes' per-username count.

    That limit is a sliding window in the ``rate_limits`` cache, not an axes lock-out keyed on the address
    alone: axes compares every key with the one AXES_FAILURE_LIMIT (a handful, right for one username and far
    too few for a whole client), and a successful log-in deletes the address's attempts (AXES_RESET_ON_SUCCESS),
    so a sprayer with an account of its own could clear its count. Only wrong passwords count; the attempts
    it refuses are not checked, right passwords included (else spraying would go on), and not counted."""

    def is_allowed(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        allowed = super().is_allowed(request, credentials)
        request.dialeval_password_checked = allowed  # type: ignore[attr-defined]
        return allowed

    def is_locked(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        if super().is_locked(request, credentials):
            return True
        budget = rate_limit_budget(_login_failures_key(request), _login_failure_rate(), count=False)
        if budget is None or not budget.refused:
            return False
        request.dialeval_login_retry_after = budget.retry_after  # type: ignore[attr-defined]
        return True

    def user_login_failed(
        self, sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
    ) -> None:
        if request is not None and getattr(request, "dialeval_login_retry_after", None) is not None:
            # Refused for this client's failures: answered by login_locked_out, and not an attempt on this
            # username (recording it would lock the username out from here as well).
            request.axes_locked_out = True  # type: ignore[attr-defined]
            request.axes_credentials = credentials  # type: ignore[attr-defined]
            return
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is not None and getattr(request, "dialeval_password_checked", False):
            rate_limit_budget(_login_failures_key(request), _login_failure_rate())


def _login_failures_key(request: HttpRequest) -> str:
    return f"login-failures:{client_ip(request)}"


def _login_failure_rate() -> Rate | None:
    return parse_rate(getattr(settings, "DIALEVAL_LOGIN_FAILURE_RATE_CLIENT", None))


def login_locked_out(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: 429 with Retry-After (the cool-off, or the wait of the client's failures)
    instead of axes' plain 429."""
    from axes.helpers import get_cool_off

    client_wait = getattr(request, "dialeval_login_retry_after", None)
    if client_wait is not None:
        return too_many_requests(
            request,
            client_wait,
            f"Too many failed log-ins from here; try again in {wait_text(client_wait)}.",
        )
    cool_off = get_cool_off(request)
    seconds = max(1, int(cool_off.total_seconds())) if cool_off else 3600
    return too_many_requests(
        request,
        seconds,
        f"Too many failed log-ins for this account from here; try again in {wait_text(seconds)}.",
    )
