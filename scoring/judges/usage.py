"""What a run's LLM judges cost: the endpoints' answers the run paid for (``JudgeAnswer.run``), summed.

Answers a run took from the cache (asked before by another run, a preview or the command line) are not
counted: they cost it nothing. A local model sends no request and records no tokens."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Sum

from scoring.metrics.llm_judge.definition import JUDGE_PREFIX, MASS_PREFIX
from scoring.models import JudgeAnswer


@dataclass(frozen=True)
class JudgeUsage:
    """``answers`` paid for, ``requests`` sent for them (retries included), and their tokens."""

    answers: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "answers": self.answers,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    @property
    def text(self) -> str:
        """ "12 requests, 3,456 prompt and 12 completion tokens" (what the run page shows)."""
        plural = "" if self.requests == 1 else "s"
        return (
            f"{self.requests:,} request{plural}, {self.prompt_tokens:,} prompt and "
            f"{self.completion_tokens:,} completion tokens"
        )


def judge_usage_for_runs(*, run_ids: Iterable[int]) -> dict[int, JudgeUsage]:
    """Each run's usage, in one query (a run that paid for no answer: zeros)."""
    ids = [int(run_id) for run_id in run_ids]
    usage = dict.fromkeys(ids, JudgeUsage())
    rows = (
        JudgeAnswer.objects.filter(run_id__in=ids)
        .values("run_id")
        .annotate(
            answers=Count("id"),
            requests=Sum("requests"),
            prompt_tokens=Sum("prompt_tokens"),
            completion_tokens=Sum("completion_tokens"),
        )
    )
    for row in rows:
        usage[int(row["run_id"])] = JudgeUsage(
            answers=int(row["answers"]),
            requests=int(row["requests"] or 0),
            prompt_tokens=int(row["prompt_tokens"] or 0),
            completion_tokens=int(row["completion_tokens"] or 0),
        )
    return usage


def judge_usage_for_run(*, run_id: int) -> JudgeUsage:
    return judge_usage_for_runs(run_ids=[run_id])[int(run_id)]


def has_judges(metrics: Iterable[str]) -> bool:
    """Whether a run's metrics hold an LLM judge's."""
    return any(str(name).startswith((f"{JUDGE_PREFIX}:", f"{MASS_PREFIX}:")) for name in metrics)
