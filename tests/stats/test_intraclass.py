"""The ICC computed from the ratings matrix (stats/intraclass.py, through intraclass_correlation) against
pingouin.intraclass_corr on the same ratings, to 1e-12: crossed raters and the one-way model, ties, a rater
who gives one value throughout, raters in perfect agreement, tiny and large studies."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest

from stats.agreement_coefficients import intraclass_correlation


def _pingouin(rows: Sequence[tuple[Any, Any, float]], single: str, average: str) -> dict[str, Any]:
    """pingouin.intraclass_corr on the long form the report built before stats/intraclass.py."""
    pingouin = pytest.importorskip("pingouin")
    frame = pd.DataFrame(rows, columns=["item", "rater", "value"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pingouin.intraclass_corr(data=frame, targets="item", raters="rater", ratings="value")
    table = table.set_index("Type")
    p_column = "pval" if "pval" in table.columns else "p_val"
    return {
        "value": float(table.loc[single, "ICC"]),
        "ci95": [float(bound) for bound in table.loc[single, "CI95"]],
        "p": float(table.loc[single, p_column]),
        "average_value": float(table.loc[average, "ICC"]),
    }


def _close(ours: float | None, theirs: float) -> bool:
    if ours is None:
        return not math.isfinite(theirs)
    return math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-12)


def _matrix(seed: int, items: int, raters: int, case: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=items)
    matrix = np.clip(truth[:, None] + rng.integers(-1, 2, size=(items, raters)), 1, 5).astype(np.float64)
    if case == "constant rater":
        matrix[:, 0] = 3.0
    elif case == "perfect agreement":
        matrix[:] = truth[:, None]
    elif case == "biased rater":
        matrix[:, -1] = np.minimum(matrix[:, -1] + 1, 5)
    return matrix


def _only_perfect_agreement_asks_pingouin(case: str, items: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ANOVA here, except where the error term is rounding noise (raters in perfect agreement, which the
    smallest studies may be by chance)."""
    if case != "perfect agreement" and items >= 12:

        def refuse(*args: object) -> None:
            raise AssertionError("pingouin asked where the error term stands above rounding")

        monkeypatch.setattr("stats.agreement_coefficients._pingouin_intraclass", refuse)


CASES = ["noisy", "constant rater", "perfect agreement", "biased rater"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(("seed", "items", "raters"), [(0, 3, 2), (1, 12, 3), (2, 60, 5), (3, 400, 9)])
def test_two_way_equals_pingouin(
    case: str, seed: int, items: int, raters: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _only_perfect_agreement_asks_pingouin(case, items, monkeypatch)
    matrix = _matrix(seed, items, raters, case)
    ratings = {f"r{j}": {f"i{i}": int(matrix[i, j]) for i in range(items)} for j in range(raters)}
    result = intraclass_correlation(ratings)
    assert result.details["type"] == "ICC(A,1)"
    items_of = {rater: set(values) for rater, values in ratings.items()}
    common = set.intersection(*items_of.values())
    rows = [(item, rater, ratings[rater][item]) for rater in items_of for item in common]
    expected = _pingouin(rows, "ICC(A,1)", "ICC(A,k)")
    assert _close(result.value, expected["value"])
    assert _close(result.details["average_value"], expected["average_value"])
    assert _close(result.details["p"], expected["p"])
    assert all(_close(a, b) for a, b in zip(result.details["ci95"], expected["ci95"], strict=True))
    assert (result.items, result.ratings, result.details["raters"]) == (items, items * raters, raters)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(("seed", "items", "raters"), [(4, 3, 2), (5, 15, 3), (6, 80, 4)])
def test_one_way_equals_pingouin(
    case: str, seed: int, items: int, raters: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _only_perfect_agreement_asks_pingouin(case, items, monkeypatch)
    matrix = _matrix(seed, items, raters, case)
    anonymous: dict[Any, list[float]] = {i: [float(v) for v in matrix[i]] for i in range(items)}
    anonymous[items] = [2.0]  # one rating: left out
    anonymous[items + 1] = [1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0][: raters + 1]  # another count
    result = intraclass_correlation({}, anonymous)
    assert result.details["type"] == "ICC(1,1)"
    rows = [
        (item, position, value) for item in range(items) for position, value in enumerate(anonymous[item])
    ]
    expected = _pingouin(rows, "ICC(1,1)", "ICC(1,k)")
    assert _close(result.value, expected["value"])
    assert _close(result.details["average_value"], expected["average_value"])
    assert _close(result.details["p"], expected["p"])
    assert all(_close(a, b) for a, b in zip(result.details["ci95"], expected["ci95"], strict=True))
    assert (result.items, result.ratings) == (items, items * raters)


def test_not_computable_cases_say_why() -> None:
    same = {f"r{j}": dict.fromkeys(range(5), 3) for j in range(3)}
    assert intraclass_correlation(same).note == "not computable: every rating has the same value"
    assert intraclass_correlation({}, {0: [1.0], 1: [2.0]}).note == "not computable: no reply has two ratings"
    two = {0: [1.0, 2.0], 1: [2.0, 3.0]}
    assert intraclass_correlation({}, two).note.startswith("not computable: fewer than 3 replies")
