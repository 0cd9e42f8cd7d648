"""A run's pairwise judges: the pairs each judges (planning), and the verdicts of a 'pairwise' chunk.

A pairwise judge (``llm-pairwise:<key>``, scoring/judges/pairwise_judges.py) judges the study's pairs of
replies: the distinct (response_a, response_b) of its pairwise work items, else of its pairwise judgments
(judgments imported without items), each pair asked in both orders (Zheng et al., 2023;
scoring/metrics/llm_judge/pairwise.py). Planning puts the pairs without a verdict under the judge's
signature (every pair when the run recomputes) into chunks whose ``pairs`` are ``[response_a,
response_b]`` rows; a chunk's outcome is unsaved ``JudgePairVerdict`` rows, which
:func:`~scoring.services.chunk_storage.chunk_store` writes with the chunk's DONE mark, fenced like every
other kind.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from annotation.models import PairwiseJudgment, WorkItem, WorkKind
from scoring.judges.pairwise_judges import pairwise_judge
from scoring.metrics.llm_judge.judging import JudgeSetup
from scoring.metrics.llm_judge.pairwise import Pair
from scoring.models import JudgePairVerdict, ScoringChunk, ScoringRun
from scoring.services.chunk_reads import reply_items
from scoring.services.chunk_storage import ChunkOutcome
from scoring.services.references_policy import references_for_mode

ReplyPair = tuple[int, int]  # (response_a, response_b), response_a the lower id
Beat = Callable[[int], None]  # pairs of the chunk done


def study_pairs(*, study_id: int) -> list[ReplyPair]:
    """The study's pairs of replies to compare, in id order: those of its pairwise work items, else those
    its pairwise judgments compared."""
    pairs = set(
        WorkItem.objects.filter(study_id=study_id, kind=WorkKind.PAIR, response_b__isnull=False).values_list(
            "response_id", "response_b_id"
        )
    )
    if not pairs:
        pairs = set(
            PairwiseJudgment.objects.filter(response_a__context__study_id=study_id).values_list(
                "response_a_id", "response_b_id"
            )
        )
    return sorted((int(first), int(second)) for first, second in pairs if first is not None)


def pairs_to_judge(*, study_id: int, signature_id: int, recompute: bool) -> list[ReplyPair]:
    """The study's pairs without a verdict under ``signature_id`` (all of them when ``recompute``)."""
    pairs = study_pairs(study_id=study_id)
    if recompute:
        return pairs
    judged = set(
        JudgePairVerdict.objects.filter(
            signature_id=signature_id, response_a__context__study_id=study_id
        ).values_list("response_a_id", "response_b_id")
    )
    return [pair for pair in pairs if pair not in judged]


def pairwise_chunk_outcome(chunk: ScoringChunk, run: ScoringRun, beat: Beat) -> ChunkOutcome:
    """The verdicts of the chunk's judge on its pairs (a reply deleted since planning leaves its pair
    out); ``beat`` gets the pairs done. A pair on which the judge put no probability on any label keeps a
    row without a verdict, counted as undefined, so that it is not asked again."""
    name = chunk.metrics[0]
    judge = pairwise_judge(name)
    signature_id = int(run.signatures[name])  # planned with the run
    started = time.perf_counter()
    rows = [(int(first), int(second)) for first, second in chunk.pairs]
    items = {item.pk: item for item in reply_items(sorted({pk for pair in rows for pk in pair}))}
    present = [(first, second) for first, second in rows if first in items and second in items]
    pairs = [
        Pair(
            context=items[first].context,
            first=items[first].text,
            second=items[second].text,
            references=tuple(references_for_mode(items[first].references, run.references)),
        )
        for first, second in present
    ]
    setup = JudgeSetup(judge.definition.template, judge.definition.question)
    verdicts = judge.backend.pair_verdicts(setup, pairs, lambda prompts: beat(prompts // 2)) if pairs else []
    outcome = ChunkOutcome(seconds={name: time.perf_counter() - started})
    for (first, second), verdict in zip(present, verdicts, strict=True):
        outcome.pair_verdicts.append(
            JudgePairVerdict(
                signature_id=signature_id,
                response_a_id=first,
                response_b_id=second,
                first_better=verdict.first_better,
                second_better=verdict.second_better,
                tie=verdict.tie,
                verdict=verdict.verdict or "",
                position_bias=verdict.position_bias,
                consistent=verdict.consistent,
                mass_first=verdict.mass[0],
                mass_second=verdict.mass[1],
            )
        )
        if verdict.verdict is None:
            outcome.undefined[name] = outcome.undefined.get(name, 0) + 1
    return outcome
