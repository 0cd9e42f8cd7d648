"""The qualification round's pass rule, with no database access: the service that decides a volunteer's
round (annotation/services/qualification.py) and the warning the researcher sees while adding training
items (annotation/selectors/qualification_warning.py) must agree on it."""

from __future__ import annotations

import math

# Comparing counts, not floats: 4 of 5 right meets a threshold of 0.8 although 4 / 5 may round below it.
EPSILON = 1e-9


def qualification_passes(*, correct: int, total: int, threshold: float) -> bool:
    """Whether ``correct`` right answers out of ``total`` training items meet ``threshold`` (a share)."""
    return correct + EPSILON >= threshold * total


def items_for_one_mistake(threshold: float) -> int | None:
    """The fewest training items with which a volunteer who gets one wrong still passes: the smallest n
    with (n - 1) / n >= threshold. None when no number of items allows it (a threshold of 1)."""
    if qualification_passes(correct=0, total=1, threshold=threshold):
        return 1
    if threshold >= 1:
        return None
    # (n - 1) / n >= t  <=>  n >= 1 / (1 - t); the loops only correct the float estimate by a step.
    n = max(2, math.ceil(1 / (1 - threshold)))
    while not qualification_passes(correct=n - 1, total=n, threshold=threshold):
        n += 1
    while n > 2 and qualification_passes(correct=n - 2, total=n - 1, threshold=threshold):
        n -= 1
    return n
