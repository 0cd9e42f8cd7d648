"""Servers' answers kept in the database (``JudgeAnswer``), so no request is paid for twice: a rerun, a
chunk computed again after a worker died, or the same judge in another study asks the cache first. Each
answer records the run that paid for it (the run the scoring chunk computes, :func:`answers_for_run`) and
the tokens it used: a run's usage is the sum over the answers it paid for."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from scoring.models import JudgeAnswer

_RUN: contextvars.ContextVar[int | None] = contextvars.ContextVar("judge_answers_run", default=None)


@contextlib.contextmanager
def answers_for_run(run_id: int | None) -> Iterator[None]:
    """Attribute the answers fetched inside the block to the scoring run ``run_id``."""
    token = _RUN.set(run_id)
    try:
        yield
    finally:
        _RUN.reset(token)


class DatabaseAnswerCache:
    """The :class:`~scoring.metrics.llm_judge.server_client.AnswerCache` of the app, for one endpoint."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def get_many(self, keys: Sequence[str]) -> Mapping[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 500):
            rows = JudgeAnswer.objects.filter(key__in=keys[start : start + 500]).values_list("key", "answer")
            found.update({key: dict(answer) for key, answer in rows})
        return found

    def put(self, key: str, answer: dict[str, Any]) -> None:
        JudgeAnswer.objects.bulk_create(
            [
                JudgeAnswer(
                    key=key,
                    endpoint=self.endpoint,
                    answer=answer,
                    run_id=_RUN.get(),
                    prompt_tokens=int(answer.get("prompt_tokens", 0)),
                    completion_tokens=int(answer.get("completion_tokens", 0)),
                    requests=int(answer.get("requests", 1)),
                )
            ],
            ignore_conflicts=True,  # two attempts of one chunk may fetch the same answer: the first one stays
        )
