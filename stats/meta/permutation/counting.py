"""Running the tests of pairs of metrics on one plan, block by block of permutations: how many swapped
differences reach the observed one, the p-values (Phipson & Smyth, 2010) and early stopping as the WMT metrics
task runs mt-metrics-eval."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stats.meta.permutation.plan import Block, Plan
from stats.meta.permutation.types import EQUAL, EarlyStop, PermutationResult

BLOCK_CELLS = 2_000_000  # permutations x units of one mask block


@dataclass
class Count:
    """One direction of a pair's test: how many swapped differences reached the observed one."""

    observed: float
    greater: int = 0
    larger: int = 0
    used: int = 0
    done: bool = False

    def add(self, delta: np.ndarray, drawn: int, early_stop: EarlyStop | None) -> None:
        defined = np.isfinite(delta)
        self.greater += int(np.sum(delta[defined] >= self.observed - EQUAL))
        self.larger += int(np.sum(np.abs(delta[defined]) >= abs(self.observed) - EQUAL))
        self.used += int(defined.sum())
        if early_stop is not None and drawn % early_stop.block == 0 and self.used:
            share = self.greater / self.used
            self.done = share < early_stop.below or share > early_stop.above


@dataclass
class Tally:
    """A pair's test, and the reverse pair's (second against first) when it was asked for too: the reverse's
    swapped differences are the negated ones on the very same masks, so one run counts both, each stopping by
    its own rule, exactly as two runs would."""

    first: int
    second: int
    statistics: tuple[float, float]
    forward: Count
    reverse: Count | None = None
    pair: object = None

    @property
    def active(self) -> bool:
        return not self.forward.done or (self.reverse is not None and not self.reverse.done)

    def add(self, delta: np.ndarray, drawn: int, early_stop: EarlyStop | None) -> None:
        if not self.forward.done:
            self.forward.add(delta, drawn, early_stop)
        if self.reverse is not None and not self.reverse.done:
            self.reverse.add(-delta, drawn, early_stop)

    def results(self) -> dict[tuple[int, int], PermutationResult]:
        a, b = self.statistics
        results = {(self.first, self.second): _result(self.first, self.second, self.forward, a, b)}
        if self.reverse is not None:
            results[(self.second, self.first)] = _result(self.second, self.first, self.reverse, b, a)
        return results


def _result(first: int, second: int, count: Count, a: float, b: float) -> PermutationResult:
    return PermutationResult(
        first=first,
        second=second,
        delta=count.observed,
        p_value=(count.greater + 1) / (count.used + 1),
        p_two_sided=(count.larger + 1) / (count.used + 1),
        permutations=count.used,
        statistic_first=a,
        statistic_second=b,
    )


def run_plan(
    plan: Plan,
    pairs: list[tuple[int, int]],
    permutations: int,
    seed: int,
    early_stop: EarlyStop | None,
) -> dict[tuple[int, int], PermutationResult]:
    """The tests of ``pairs`` on one plan; a pair whose reverse is in ``pairs`` too is counted with it."""
    results: dict[tuple[int, int], PermutationResult] = {}
    tallies: dict[tuple[int, int], Tally] = {}
    for first, second in pairs:
        if (first, second) in tallies or (second, first) in tallies:
            tally = tallies.get((second, first))
            if tally is not None and first != second and tally.reverse is None:
                tally.reverse = Count(-tally.forward.observed)
            continue
        if plan.observed_undefined:
            results[(first, second)] = PermutationResult(
                first, second, None, None, None, 0, note=plan.observed_undefined
            )
            continue
        a, b = plan.statistic(plan.metric(first), plan.metric(second), None)
        if not (np.isfinite(a[0]) and np.isfinite(b[0])):
            note = "not computable: a statistic is undefined on the replies both metrics scored"
            results[(first, second)] = PermutationResult(first, second, None, None, None, 0, note=note)
            results[(second, first)] = PermutationResult(second, first, None, None, None, 0, note=note)
            continue
        tallies[(first, second)] = Tally(first, second, (float(a[0]), float(b[0])), Count(float(a[0] - b[0])))
    step = early_stop.block if early_stop is not None else permutations
    cap = max(1, min(step, BLOCK_CELLS // max(1, plan.units)))
    # The largest block that divides the early-stopping block, so that every check falls on a block's end.
    rows = next(size for size in range(cap, 0, -1) if step % size == 0)
    blocks = plan.mask_blocks(seed, rows)
    drawn, index = 0, 0
    while drawn < permutations and any(tally.active for tally in tallies.values()):
        size = min(rows, permutations - drawn)
        drawn += size
        block = Block(plan, blocks, (seed, rows, index), size)
        for tally in tallies.values():
            if tally.active:
                if tally.pair is None:
                    tally.pair = plan.pair(tally.first, tally.second)
                tally.add(plan.deltas(tally.pair, block), drawn, early_stop)
        index += 1
    for tally in tallies.values():
        results.update(tally.results())
    return results
