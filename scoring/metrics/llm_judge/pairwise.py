"""The pairwise judge: which of two replies to a context is better, asked in both orders.

The judge of Zheng et al. (2023) answers ``A`` (the first reply shown is better), ``B`` (the second) or
``C`` (a tie); judges prefer a position, so each pair (x, y) is asked twice, x shown first and then y
shown first. With p₁ and p₂ the two next-token distributions renormalised over the three labels,

    P(x better) = (p₁(A) + p₂(B)) / 2,   P(y better) = (p₁(B) + p₂(A)) / 2,   P(tie) = (p₁(C) + p₂(C)) / 2,

which cancels a constant preference for a position; the verdict is the likeliest of the three. The
position bias is what the order swap cancels: the probability the first reply shown wins minus the
probability the second wins, averaged over both orders, ``(p₁(A) + p₂(A))/2 - (p₁(B) + p₂(B))/2`` (0 for
an unbiased judge; its mean over pairs is reported). A pair is *consistent* when both orders pick the same
reply (or both a tie).

A pairwise judge is a definition with a pairwise template (:mod:`.definition`) asking the study's pairwise
question on the nominal scale A / B / C (:data:`PAIRWISE_SCALE`); it is named ``llm-pairwise:<key>``, and a
scoring run stores its verdict per pair under a signature of :func:`pairwise_signature_parameters`. Its
summary and its comparison with the people's judgments are in stats/judge_pairwise.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scoring.metrics.llm_judge.definition import JudgeDefinition
from scoring.metrics.llm_judge.local_model import LocalJudgeModel
from scoring.metrics.llm_judge.parts import prompt_parts
from scoring.metrics.llm_judge.prompts import JudgeItem, JudgeQuestion, PromptTemplate
from scoring.metrics.llm_judge.scale import JudgeScale, label_probabilities
from scoring.metrics.llm_judge.server_client import ServerJudge, ServerPrompt
from stats.judge_names import PAIRWISE_PREFIX, pairwise_judge_key
from stats.judge_pairwise import FIRST, SECOND, TIE
from stats.judge_pairwise import PairVerdict as PairVerdict  # the verdict and the summary, kept here too
from stats.judge_pairwise import PairwiseSummary as PairwiseSummary
from stats.judge_pairwise import pairwise_summary as pairwise_summary

PAIRWISE_LABELS = ("A", "B", "C")  # first better, second better, tie
PAIRWISE_SCALE = JudgeScale(
    0, 2, ("the first reply is better", "the second reply is better", "a tie"), nominal=True
)
PAIRWISE_QUESTION = "pairwise"
PAIRWISE_VERSION = "1"


def pairwise_question(text: str) -> JudgeQuestion:
    """The question a pairwise judge asks: ``text`` (a study's pairwise prompt) on the nominal scale."""
    return JudgeQuestion(PAIRWISE_QUESTION, text, PAIRWISE_SCALE)


def pairwise_judge_name(definition: JudgeDefinition) -> str:
    """``llm-pairwise:<key>``: the name a scoring run asks for the pairwise judge ``definition`` by."""
    return f"{PAIRWISE_PREFIX}:{definition.key()}"


def pairwise_judge_names(names: Sequence[str]) -> list[str]:
    """The pairwise judges among a run's ``names``: the third kind of name beside per-response and
    system-level metrics, which the metric registry does not know."""
    return [name for name in names if pairwise_judge_key(name) is not None]


def without_pairwise_judges(names: Sequence[str]) -> list[str]:
    """``names`` without the pairwise judges: the metrics the registry computes."""
    return [name for name in names if pairwise_judge_key(name) is None]


def pairwise_signature_parameters(
    definition: JudgeDefinition, *, model_id: str, reads: str, model_hash: str
) -> dict[str, str]:
    """What the signature of a pairwise judge's verdicts records: the rating judge's parameters
    (:meth:`JudgeDefinition.signature_parameters`), the orders asked (both), a local model's content hash
    (``artifact``) and the version."""
    parameters = definition.signature_parameters(model_id=model_id, reads=reads)
    parameters["orders"] = "both"
    if model_hash:
        parameters["artifact"] = model_hash
    parameters["version"] = PAIRWISE_VERSION
    return parameters


@dataclass(frozen=True)
class Pair:
    """Two replies to one context (turns oldest first); ``references`` optional."""

    context: tuple[str, ...]
    first: str
    second: str
    references: tuple[str, ...] = ()


def _normalised(probabilities: Sequence[float]) -> tuple[float, ...] | None:
    total = sum(probabilities)
    return tuple(value / total for value in probabilities) if total > 0 else None


def pair_verdict(shown_first: Sequence[float], shown_second: Sequence[float]) -> PairVerdict:
    """The verdict from the label probabilities (A, B, C) with x shown first and with y shown first."""
    mass = (float(sum(shown_first)), float(sum(shown_second)))
    one, two = _normalised(shown_first), _normalised(shown_second)
    if one is None or two is None:
        return PairVerdict(None, None, None, None, None, None, mass)
    first_better = (one[0] + two[1]) / 2
    second_better = (one[1] + two[0]) / 2
    tie = (one[2] + two[2]) / 2
    options = {FIRST: first_better, SECOND: second_better, TIE: tie}
    verdict = max(options, key=lambda name: options[name])
    picks = (_pick(one, (FIRST, SECOND)), _pick(two, (SECOND, FIRST)))
    bias = (one[0] + two[0]) / 2 - (one[1] + two[1]) / 2
    return PairVerdict(first_better, second_better, tie, verdict, bias, picks[0] == picks[1], mass)


def _pick(probabilities: Sequence[float], shown: tuple[str, str]) -> str:
    """Which reply one order's likeliest label picks: ``shown`` names the replies shown as A and B."""
    best = max(range(3), key=lambda index: (probabilities[index], -index))
    return TIE if best == 2 else shown[best]


def _items(pairs: Sequence[Pair]) -> list[JudgeItem]:
    """Each pair twice: first shown first, then second shown first."""
    items = []
    for pair in pairs:
        items.append(JudgeItem(pair.context, pair.first, pair.references, reply_b=pair.second))
        items.append(JudgeItem(pair.context, pair.second, pair.references, reply_b=pair.first))
    return items


def _verdicts(rows: Sequence[Sequence[float]]) -> list[PairVerdict]:
    return [pair_verdict(rows[index], rows[index + 1]) for index in range(0, len(rows), 2)]


def local_pair_verdicts(
    model: LocalJudgeModel,
    template: PromptTemplate,
    question: JudgeQuestion,
    pairs: Sequence[Pair],
    *,
    batch_size: int = 8,
    prefix_cache: bool = True,
    progress: Callable[[int], None] | None = None,
) -> list[PairVerdict]:
    """Each pair's verdict by the in-process model (two forward passes per pair)."""
    _check(template)
    parts = prompt_parts(template, question, _items(pairs), model.formatted)
    rows = model.label_probabilities(
        parts, PAIRWISE_LABELS, batch_size=batch_size, prefix_cache=prefix_cache, progress=progress
    )
    return _verdicts([list(row) for row in rows])


def server_pair_verdicts(
    judge: ServerJudge,
    template: PromptTemplate,
    question: JudgeQuestion,
    pairs: Sequence[Pair],
    *,
    progress: Callable[[int], None] | None = None,
) -> list[PairVerdict]:
    """Each pair's verdict by the endpoint (two requests per pair, each cached)."""
    _check(template)
    prompts = [ServerPrompt(*template.messages(question, item)) for item in _items(pairs)]
    answers = judge.answers(prompts, progress=progress)
    return _verdicts([label_probabilities(PAIRWISE_LABELS, answer["tokens"]) for answer in answers])


def _check(template: PromptTemplate) -> None:
    if not template.pairwise:
        raise ValueError(
            f"template {template.name!r} rates one reply; a pairwise judge needs a pairwise template"
        )
