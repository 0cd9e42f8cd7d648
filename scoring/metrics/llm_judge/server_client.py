"""The OpenAI-compatible backend: a server (vLLM, Ollama, llama.cpp's server, OpenAI) that the operator
configured gives the next-token log-probabilities of each prompt.

Two APIs, as the endpoint declares:

- ``completions`` (``/completions``, ``logprobs: k``): the client formats the prompt itself with the
  endpoint's ``prompt_format`` (``chatml``: the ChatML turns of SmolLM2, Qwen and others, identical to
  their chat template; ``plain``: the messages one after the other), the answer prefix included, so the
  model reads exactly what the in-process backend gives the same model;
- ``chat`` (``/chat/completions``, ``logprobs: true, top_logprobs: k``): the server formats the
  messages; a template's answer prefix is sent as the start of the assistant's message with vLLM's
  ``continue_final_message`` (a server that does not continue it starts a new message: the mass on labels
  shows it).

Only the ``k`` most likely tokens come back (``top_logprobs``, 20 by default, OpenAI's most), so a label
outside them counts as probability 0 (the reading's mass says how much is seen). A server that gives no
log-probabilities is asked for a few tokens and its answer is parsed: the first label it writes gets
probability 1 (``read: parsed`` in the signature).

Every request runs under the endpoint's time-out, at most ``workers`` at once per call (the app divides the
endpoint's ``concurrency`` among the chunks of a run that may run at once); a refusal
(429) or a server error (5xx), a refused connection or a time-out is tried again after a back-off that
honours ``Retry-After``, up to ``attempts`` times. Every answer is kept in an :class:`AnswerCache` under
the hash of the endpoint's model, the request and the prompt, so a rerun or a chunk computed again asks
the server nothing twice. The key is sent in the ``Authorization`` header and appears in no message.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import math
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Protocol

API_COMPLETIONS = "completions"
API_CHAT = "chat"
PROMPT_FORMATS = ("chatml", "plain")
RETRIED_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_BACKOFF_SECONDS = 60.0
PARSED_MAX_TOKENS = 8


class EndpointError(RuntimeError):
    """A server that refused or failed every attempt; the message names the endpoint, never its key."""


@dataclass(frozen=True)
class Endpoint:
    """An operator's server: ``name`` researchers pick it by, ``base_url`` up to ``/v1``, ``api_key`` (may
    be empty), ``model`` the id the server knows the model by, the ``api`` and ``prompt_format`` (module
    docstring), ``top_logprobs`` asked, requests at once per run, per-request ``timeout`` in seconds and
    ``attempts`` per request. ``logprobs``: the server gives log-probabilities (else answers are parsed)."""

    name: str
    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    api: str = API_COMPLETIONS
    prompt_format: str = "chatml"
    top_logprobs: int = 20
    concurrency: int = 4
    timeout: float = 60.0
    attempts: int = 5
    logprobs: bool = True

    def __post_init__(self) -> None:
        if self.api not in (API_COMPLETIONS, API_CHAT):
            raise ValueError(
                f"endpoint {self.name}: api must be {API_COMPLETIONS} or {API_CHAT}, not {self.api!r}"
            )
        if self.prompt_format not in PROMPT_FORMATS:
            raise ValueError(
                f"endpoint {self.name}: prompt_format must be one of {', '.join(PROMPT_FORMATS)}, "
                f"not {self.prompt_format!r}"
            )
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"endpoint {self.name}: base_url must start with http:// or https://")

    @property
    def reads(self) -> str:
        return "logprobs" if self.logprobs else "parsed"


def formatted(prompt_format: str, system: str, user: str, answer_prefix: str) -> str:
    """The prompt text of the ``completions`` API (module docstring)."""
    if prompt_format == "chatml":
        return (
            f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            f"<|im_start|>assistant\n{answer_prefix}"
        )
    return f"{system}\n\n{user}\n\n{answer_prefix}"


class AnswerCache(Protocol):
    """Where answers are kept by key: ``get`` gives None for a key never put."""

    def get_many(self, keys: Sequence[str]) -> Mapping[str, dict[str, Any]]: ...

    def put(self, key: str, answer: dict[str, Any]) -> None: ...


class MemoryCache:
    """An :class:`AnswerCache` in a dict (tests, one-off scoring of files)."""

    def __init__(self) -> None:
        self.answers: dict[str, dict[str, Any]] = {}

    def get_many(self, keys: Sequence[str]) -> Mapping[str, dict[str, Any]]:
        return {key: self.answers[key] for key in keys if key in self.answers}

    def put(self, key: str, answer: dict[str, Any]) -> None:
        self.answers[key] = answer


@dataclass
class Usage:
    """What a call cost: requests sent (retries included), answers taken from the cache, tokens."""

    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, answer: Mapping[str, Any], attempts: int) -> None:
        self.requests += attempts
        self.prompt_tokens += int(answer.get("prompt_tokens", 0))
        self.completion_tokens += int(answer.get("completion_tokens", 0))


@dataclass(frozen=True)
class ServerPrompt:
    """One request's messages: ``system``, ``user``, the ``answer_prefix``."""

    system: str
    user: str
    answer_prefix: str


class ServerJudge:
    """Asks an :class:`Endpoint` for the next-token distribution of prompts, with the cache and retries."""

    def __init__(
        self,
        endpoint: Endpoint,
        cache: AnswerCache,
        *,
        sleep: Callable[[float], None] = time.sleep,
        opener: Callable[..., Any] = urllib.request.urlopen,
        workers: int | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.workers = max(1, endpoint.concurrency if workers is None else workers)
        self.cache = cache
        self.usage = Usage()
        self._sleep = sleep
        self._open = opener

    def request_body(self, prompt: ServerPrompt) -> dict[str, Any]:
        endpoint = self.endpoint
        body: dict[str, Any] = {"model": endpoint.model, "temperature": 0.0}
        body["max_tokens"] = 1 if endpoint.logprobs else PARSED_MAX_TOKENS
        if endpoint.api == API_COMPLETIONS:
            body["prompt"] = formatted(
                endpoint.prompt_format, prompt.system, prompt.user, prompt.answer_prefix
            )
            if endpoint.logprobs:
                body["logprobs"] = endpoint.top_logprobs
        else:
            messages = [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ]
            if prompt.answer_prefix:
                messages.append({"role": "assistant", "content": prompt.answer_prefix})
                body.update(continue_final_message=True, add_generation_prompt=False)
            body["messages"] = messages
            if endpoint.logprobs:
                body.update(logprobs=True, top_logprobs=endpoint.top_logprobs)
        return body

    def cache_key(self, body: Mapping[str, Any]) -> str:
        text = json.dumps({"base": self.endpoint.base_url, "body": body}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def answers(
        self, prompts: Sequence[ServerPrompt], *, progress: Callable[[int], None] | None = None
    ) -> list[dict[str, Any]]:
        """Each prompt's answer, ``{"tokens": {text: probability}, "text": ..., tokens used}``: from the cache
        where it holds one, else from the server (``workers`` at a time), put in the cache at once."""
        bodies = [self.request_body(prompt) for prompt in prompts]
        keys = [self.cache_key(body) for body in bodies]
        known = dict(self.cache.get_many(list(dict.fromkeys(keys))))
        missing = list(dict.fromkeys(key for key in keys if key not in known))
        self.usage.cached += len(keys) - len(missing)  # answered without a request of their own
        body_of = dict(zip(keys, bodies, strict=True))
        done = len(keys) - len(missing)
        if missing:
            # Requests in threads; the cache, the usage and progress in this thread (the caller's database
            # connection and heartbeat stay in the thread that owns them).
            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                futures = {pool.submit(self._ask, body_of[key]): key for key in missing}
                try:
                    for future in as_completed(futures):
                        answer, attempts = future.result()
                        answer["requests"] = attempts
                        self.usage.add(answer, attempts)
                        self.cache.put(futures[future], answer)
                        known[futures[future]] = answer
                        done += 1
                        if progress is not None:
                            progress(done)
                except BaseException:
                    for future in futures:
                        future.cancel()
                    raise
        return [known[key] for key in keys]

    def _ask(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        endpoint = self.endpoint
        path = "/completions" if endpoint.api == API_COMPLETIONS else "/chat/completions"
        url = endpoint.base_url.rstrip("/") + path
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        last = ""
        for attempt in range(1, endpoint.attempts + 1):
            wait: float | None = None
            try:
                request = urllib.request.Request(url, data=data, headers=headers, method="POST")
                with self._open(request, timeout=endpoint.timeout) as response:
                    payload = json.loads(response.read().decode("utf-8"))
                return parsed_answer(payload, endpoint), attempt
            except urllib.error.HTTPError as error:
                detail = _excerpt(error)
                last = f"HTTP {error.code} from {endpoint.name} ({path}): {detail}"
                if error.code not in RETRIED_STATUSES:
                    raise EndpointError(last) from None
                wait = retry_after(error.headers.get("Retry-After") if error.headers else None)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                reason = getattr(error, "reason", error)
                last = f"{endpoint.name} ({path}) did not answer: {reason}"
            except (ValueError, KeyError, IndexError, TypeError) as error:
                last = f"{endpoint.name} ({path}) gave an answer that is not a completion: {error}"
            if attempt < endpoint.attempts:
                self._sleep(backoff(attempt) if wait is None else min(wait, MAX_BACKOFF_SECONDS))
        raise EndpointError(f"{last}; gave up after {endpoint.attempts} attempts")


def _excerpt(error: urllib.error.HTTPError) -> str:
    try:
        text = error.read().decode("utf-8", "replace")
    except OSError:
        text = ""
    return " ".join(text.split())[:300] or str(error.reason)


def backoff(attempt: int) -> float:
    """Seconds before attempt ``attempt + 1``: 1, 2, 4, ... with up to 25% jitter, at most 60."""
    return min(MAX_BACKOFF_SECONDS, 2.0 ** (attempt - 1) * (1.0 + 0.25 * random.random()))


def retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds or an HTTP date), None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def parsed_answer(payload: Mapping[str, Any], endpoint: Endpoint) -> dict[str, Any]:
    """``{"tokens": {text: probability}, "text": first choice's text, tokens used}`` from a completion; a
    ValueError when it is not one (the request is then tried again)."""
    choice = payload["choices"][0]
    usage = payload.get("usage") or {}
    if endpoint.api == API_COMPLETIONS:
        text = str(choice.get("text", ""))
        top = ((choice.get("logprobs") or {}).get("top_logprobs") or [None])[0] or {}
        tokens = {str(token): float(value) for token, value in top.items()}
    else:
        text = str((choice.get("message") or {}).get("content") or "")
        content = (choice.get("logprobs") or {}).get("content") or []
        tokens = {}
        for entry in content[0].get("top_logprobs", []) if content else []:
            tokens[str(entry["token"])] = float(entry["logprob"])
    if endpoint.logprobs and not tokens:
        raise ValueError("no log-probabilities in the answer (does the server give logprobs?)")
    return {
        "tokens": {token: math.exp(value) for token, value in tokens.items()},
        "text": text,
        "prompt_tokens": int(usage.get("prompt_tokens", 0) or 0),
        "completion_tokens": int(usage.get("completion_tokens", 0) or 0),
    }


def parsed_label(text: str, labels: Sequence[str]) -> str | None:
    """The first label a generated answer writes (a label is one character or word of the scale)."""
    wanted = set(labels)
    for character in text:
        if character in wanted:
            return character
    return None
