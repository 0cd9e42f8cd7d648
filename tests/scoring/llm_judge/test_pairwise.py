"""The pairwise judge: the order swap's arithmetic, and both orders asked of the real model and server."""

from __future__ import annotations

import pytest

from scoring.metrics.llm_judge.local_model import LocalJudgeModel
from scoring.metrics.llm_judge.pairwise import (
    FIRST,
    SECOND,
    TIE,
    Pair,
    local_pair_verdicts,
    pair_verdict,
    pairwise_summary,
    server_pair_verdicts,
)
from scoring.metrics.llm_judge.prompts import JudgeQuestion
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.metrics.llm_judge.scale import JudgeScale
from scoring.metrics.llm_judge.server_client import Endpoint, MemoryCache, ServerJudge
from tests.live_services import LlamaServer

QUESTION = JudgeQuestion("better", "Which response is the more appropriate next turn?", JudgeScale(0, 2))
PAIRS = [
    Pair(("Where is the station?",), "Two blocks north, next to the bank.", "Bananas are yellow."),
    Pair(("Do you like music?",), "I like cheese.", "Yes, mostly jazz. And you?"),
]


def test_a_judge_that_always_prefers_the_first_position_is_cancelled_by_the_swap() -> None:
    verdict = pair_verdict([0.8, 0.2, 0.0], [0.8, 0.2, 0.0])  # "A" whatever is shown first
    assert verdict.first_better == pytest.approx(0.5)
    assert verdict.second_better == pytest.approx(0.5)
    assert verdict.position_bias == pytest.approx(0.6)
    assert verdict.consistent is False


def test_a_judge_that_follows_the_reply_is_consistent_and_unbiased() -> None:
    verdict = pair_verdict([0.9, 0.05, 0.05], [0.05, 0.9, 0.05])  # x wins in both orders
    assert verdict.verdict == FIRST
    assert verdict.first_better == pytest.approx(0.9)
    assert verdict.position_bias == pytest.approx(0.0)
    assert verdict.consistent is True
    assert pair_verdict([0.1, 0.2, 0.7], [0.2, 0.1, 0.7]).verdict == TIE


def test_probabilities_are_renormalised_over_the_three_labels_per_order() -> None:
    verdict = pair_verdict([0.2, 0.1, 0.1], [0.05, 0.3, 0.05])
    assert verdict.mass == (pytest.approx(0.4), pytest.approx(0.4))
    assert verdict.first_better == pytest.approx((0.5 + 0.75) / 2)
    parts = (verdict.first_better, verdict.second_better, verdict.tie)
    assert sum(part or 0.0 for part in parts) == pytest.approx(1.0)
    assert pair_verdict([0, 0, 0], [0.5, 0.5, 0]).verdict is None


def test_the_summary_counts_bias_consistency_and_ties() -> None:
    verdicts = [
        pair_verdict([0.8, 0.2, 0], [0.8, 0.2, 0]),
        pair_verdict([0.9, 0.05, 0.05], [0.05, 0.9, 0.05]),
    ]
    summary = pairwise_summary(verdicts)
    assert summary.pairs == 2
    assert summary.position_bias == pytest.approx(0.3)
    assert summary.consistent == pytest.approx(0.5)


def test_the_real_model_judges_both_orders_and_the_server_agrees(
    smollm2: LocalJudgeModel, llama_server: LlamaServer
) -> None:
    template = BUILT_IN_TEMPLATES["pairwise"]
    local = local_pair_verdicts(smollm2, template, QUESTION, PAIRS)
    endpoint = Endpoint(name="llama", base_url=llama_server.base_url, model="smollm2")
    remote = server_pair_verdicts(ServerJudge(endpoint, MemoryCache()), template, QUESTION, PAIRS)
    for mine, theirs in zip(local, remote, strict=True):
        assert mine.verdict in (FIRST, SECOND, TIE)
        assert mine.first_better is not None
        assert theirs.first_better is not None
        assert abs(mine.first_better - theirs.first_better) < 0.1
        assert min(mine.mass) > 0.3  # the answer prefix "Verdict: [[" leaves the letter next
    with pytest.raises(ValueError, match="needs a pairwise template"):
        local_pair_verdicts(smollm2, BUILT_IN_TEMPLATES["g-eval"], QUESTION, PAIRS)
