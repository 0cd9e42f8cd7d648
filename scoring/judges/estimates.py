"""What the judges a run asks for will cost, shown in the run form before the run starts.

- Requests: one per reply and judge (a judge is one template on one question), so replies × questions ×
  templates. On an endpoint, answers already in the answer cache cost nothing: they are counted by
  rendering every prompt and looking its key up, while that is at most :data:`CACHE_COUNT_LIMIT` prompts;
  beyond it the estimate says "at most". A local model sends no request: the count is its forward passes.
  Replies already scored under the judge's signature are skipped by a run without "recompute": the counts
  are upper bounds in that sense too.
- Prompt tokens: characters / 4 of the prompts of a sample of the study's replies (the text sent for an
  endpoint of the completions API, the messages otherwise), times the prompts to send; no tokenizer is
  loaded in a web request, and the ratio is the usual rule of thumb for English text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User

from annotation.models import Study
from scoring.judges.backends import endpoint_settings
from scoring.judges.definitions import JudgeRequest, judge_definitions
from scoring.judges.prompt_preview import judge_prompt
from scoring.judges.study_items import judge_items, sample_ids, study_reply_ids
from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, JudgeDefinition
from scoring.metrics.llm_judge.prompts import JudgeItem
from scoring.metrics.llm_judge.server_client import MemoryCache, ServerJudge, ServerPrompt
from scoring.models import JudgeAnswer

CACHE_COUNT_LIMIT = 2_000
TOKEN_SAMPLE = 20
CHARACTERS_PER_TOKEN = 4
METHOD = f"characters / {CHARACTERS_PER_TOKEN} of the prompts of up to {TOKEN_SAMPLE} replies"


@dataclass(frozen=True)
class JudgeEstimate:
    """``judges`` (definitions: templates × questions) over ``replies``: the local model's forward
    passes, the endpoints' requests and how many of them the cache answers (None: not counted), and the
    prompt tokens of what is still to send, estimated on ``sampled`` replies (:data:`METHOD`)."""

    replies: int
    judges: int
    local_passes: int
    server_requests: int
    cached: int | None
    prompt_tokens: int
    sampled: int

    @property
    def to_send(self) -> int:
        return self.server_requests - (self.cached or 0)

    @property
    def text(self) -> str:
        parts = [f"{self.judges} judge{'s' if self.judges != 1 else ''} × {self.replies:,} replies:"]
        if self.local_passes:
            parts.append(f"{self.local_passes:,} forward passes of the local model;")
        if self.server_requests and self.cached is None:
            parts.append(f"at most {self.server_requests:,} requests (the cache is not counted for so many);")
        elif self.server_requests:
            parts.append(f"{self.to_send:,} requests to send ({self.cached:,} answered from the cache);")
        parts.append(f"about {self.prompt_tokens:,} prompt tokens ({METHOD}).")
        return " ".join(parts)


def judge_run_estimate(
    *, study: Study, requests: Sequence[JudgeRequest], user: User | AnonymousUser | None, references: str
) -> JudgeEstimate:
    """The estimate of the judges ``requests`` ask for (module docstring); a JudgeRequestError naming the
    field of a request that is wrong."""
    definitions = [
        definition
        for request in requests
        for definition in judge_definitions(study=study, request=request, user=user)
    ]
    ids = study_reply_ids(study=study)
    sample = judge_items(response_ids=sample_ids(ids, TOKEN_SAMPLE), references=references)
    served = [index for index, definition in enumerate(definitions) if definition.backend != BACKEND_LOCAL]
    cached: dict[int, int] | None = {}  # by judge on an endpoint: the answers the cache holds
    if served and len(ids) * len(served) <= CACHE_COUNT_LIMIT:
        everything = judge_items(response_ids=ids, references=references)
        cached = {index: _cached_answers(definitions[index], everything) for index in served}
    elif served:
        cached = None
    tokens = 0.0
    for index, definition in enumerate(definitions):
        to_send = len(ids) - (cached or {}).get(index, 0)
        tokens += _tokens_per_prompt(definition, sample) * to_send
    return JudgeEstimate(
        replies=len(ids),
        judges=len(definitions),
        local_passes=len(ids) * (len(definitions) - len(served)),
        server_requests=len(ids) * len(served),
        cached=sum(cached.values()) if cached is not None else None,
        prompt_tokens=round(tokens),
        sampled=len(sample),
    )


def _cached_answers(definition: JudgeDefinition, items: Sequence[JudgeItem]) -> int:
    """How many of the judge's prompts over ``items`` the answer cache holds an answer for."""
    judge = ServerJudge(endpoint_settings()[definition.model].endpoint(), MemoryCache())
    keys = []
    for item in items:
        body = judge.request_body(ServerPrompt(*definition.template.messages(definition.question, item)))
        keys.append(judge.cache_key(body))
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        part = keys[start : start + 500]
        found.update(JudgeAnswer.objects.filter(key__in=part).values_list("key", flat=True))
    return sum(key in found for key in keys)


def _tokens_per_prompt(definition: JudgeDefinition, sample: Sequence[JudgeItem]) -> float:
    """The mean estimated tokens of the judge's prompt over ``sample``."""
    if not sample:
        return 0.0
    characters = 0
    for item in sample:
        prompt = judge_prompt(definition, item)
        text = prompt.formatted or prompt.system + prompt.user + prompt.answer_prefix
        characters += len(text)
    return math.ceil(characters / len(sample) / CHARACTERS_PER_TOKEN)
