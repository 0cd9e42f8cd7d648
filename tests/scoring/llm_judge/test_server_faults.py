"""Faults of an OpenAI-compatible server, from a stub that answers as told (the real server is tested in
test_server_backend.py): refusals with Retry-After, server errors, time-outs, answers that are not
completions; the key never appears in a message."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from scoring.metrics.llm_judge.server_client import (
    Endpoint,
    EndpointError,
    MemoryCache,
    ServerJudge,
    ServerPrompt,
    retry_after,
)

SECRET = "sk-test-very-secret-key"
GOOD = {
    "choices": [{"text": "3", "logprobs": {"top_logprobs": [{"3": -0.1, " 4": -2.5}]}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 1},
}


class Stub:
    """Answers requests in order from ``script``: (status, headers, body or a delay in seconds)."""

    def __init__(self) -> None:
        self.script: list[tuple[int, dict[str, str], object]] = []
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []


@pytest.fixture
def stub() -> Iterator[tuple[Stub, str]]:
    state = Stub()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            state.received.append(json.loads(self.rfile.read(length)))
            state.headers.append(dict(self.headers))
            status, headers, body = state.script.pop(0) if state.script else (200, {}, GOOD)
            if isinstance(body, float):
                time.sleep(body)
                status, headers, body = 200, {}, GOOD
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError):  # the client timed out first
                self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _judge(base: str, sleeps: list[float], **changes: object) -> ServerJudge:
    fields: dict[str, object] = {
        "name": "stub",
        "base_url": base,
        "model": "m",
        "api_key": SECRET,
        "attempts": 3,
    }
    fields.update(changes)
    return ServerJudge(Endpoint(**fields), MemoryCache(), sleep=sleeps.append)  # type: ignore[arg-type]


PROMPT = ServerPrompt("Judge.", "Rate it.", "Score: ")


def test_a_refusal_is_tried_again_after_its_retry_after(stub: tuple[Stub, str]) -> None:
    state, base = stub
    state.script = [(429, {"Retry-After": "7"}, {"error": "slow down"})]
    sleeps: list[float] = []
    judge = _judge(base, sleeps)
    (answer,) = judge.answers([PROMPT])
    assert sleeps == [7.0]
    assert judge.usage.requests == 2
    assert answer["requests"] == 2
    assert answer["tokens"]["3"] == pytest.approx(0.904837, abs=1e-6)
    assert state.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert state.received[0]["prompt"].endswith("<|im_start|>assistant\nScore: ")
    assert state.received[0]["logprobs"] == 20
    assert state.received[0]["max_tokens"] == 1


def test_server_errors_back_off_and_give_up_naming_the_endpoint_not_the_key(stub: tuple[Stub, str]) -> None:
    state, base = stub
    state.script = [(503, {}, "overloaded")] * 3
    sleeps: list[float] = []
    with pytest.raises(EndpointError) as raised:
        _judge(base, sleeps).answers([PROMPT])
    message = str(raised.value)
    assert "HTTP 503 from stub (/completions): overloaded; gave up after 3 attempts" in message
    assert SECRET not in message
    assert SECRET not in repr(_judge(base, []).endpoint)
    assert len(sleeps) == 2
    assert 1.0 <= sleeps[0] <= 1.25
    assert 2.0 <= sleeps[1] <= 2.5


def test_a_client_error_is_not_tried_again(stub: tuple[Stub, str]) -> None:
    state, base = stub
    state.script = [(400, {}, {"error": {"message": "logprobs must be at most 5"}})]
    with pytest.raises(EndpointError, match=r"HTTP 400 from stub .*logprobs must be at most 5"):
        _judge(base, []).answers([PROMPT])
    assert len(state.received) == 1


def test_a_time_out_is_tried_again(stub: tuple[Stub, str]) -> None:
    state, base = stub
    state.script = [(200, {}, 2.0)]
    sleeps: list[float] = []
    judge = _judge(base, sleeps, timeout=0.5)
    (answer,) = judge.answers([PROMPT])
    assert len(sleeps) == 1
    assert judge.usage.requests == 2
    assert "3" in answer["tokens"]


def test_an_answer_that_is_not_a_completion_is_tried_again_then_refused(stub: tuple[Stub, str]) -> None:
    state, base = stub
    state.script = [
        (200, {}, "not json"),
        (200, {}, {"choices": []}),
        (200, {}, {"choices": [{"text": "3"}]}),
    ]
    with pytest.raises(EndpointError, match=r"not a completion.*gave up after 3 attempts"):
        _judge(base, []).answers([PROMPT])


def test_answers_are_cached_and_a_repeated_prompt_is_asked_once(stub: tuple[Stub, str]) -> None:
    state, base = stub
    judge = _judge(base, [])
    judge.answers([PROMPT, PROMPT, ServerPrompt("Judge.", "Rate that.", "Score: ")])
    assert len(state.received) == 2
    judge.answers([PROMPT])
    assert len(state.received) == 2
    assert judge.usage.cached == 2


def test_the_chat_api_sends_messages_and_continues_the_answer_prefix(stub: tuple[Stub, str]) -> None:
    state, base = stub
    state.script = [
        (200, {}, {"choices": [{"message": {"content": "3"}, "logprobs": {"content": [{"token": "3", "logprob": 0.0,
                                                                                     "top_logprobs": [{"token": "3", "logprob": -0.2}]}]}}]})
    ]  # fmt: skip
    (answer,) = _judge(base, [], api="chat").answers([PROMPT])
    body = state.received[0]
    assert body["messages"][-1] == {"role": "assistant", "content": "Score: "}
    assert body["continue_final_message"] is True
    assert body["top_logprobs"] == 20
    assert answer["tokens"] == {"3": pytest.approx(0.818731, abs=1e-6)}


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after("12") == 12.0
    assert retry_after(None) is None
    assert retry_after("soon") is None
    later = retry_after(time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30)))
    assert later is not None
    assert 25 <= later <= 31


def test_an_endpoint_refuses_what_it_cannot_use() -> None:
    with pytest.raises(ValueError, match="base_url must start with http"):
        Endpoint(name="x", base_url="file:///etc/passwd", model="m")
    with pytest.raises(ValueError, match="api must be completions or chat"):
        Endpoint(name="x", base_url="http://h/v1", model="m", api="embeddings")
