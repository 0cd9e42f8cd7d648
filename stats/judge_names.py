"""The names of an LLM judge's metrics, read without the judge's definition.

A judge (scoring/metrics/llm_judge/) scores as ``llm-judge:<key>``, ``<key>`` the 16 hex digits of its
definition's content hash, with the companion ``llm-judge-mass:<key>``: the probability the model put on the
scale's labels, per reply (a low mass says the prompt or the model does not fit the question). Both are
stored under signatures that name what made them: ``backend``, ``model``, ``artifact`` (a local model's
content hash), ``template`` (``<name>@<hash>``), ``question`` (``<name>@<hash>``), ``scale``, ``read``,
``reads`` and ``version``. The report, the display names and the benchmark read judges from their names and
signatures here; the scoring side names them with the same constants. A pairwise judge (Zheng et al., 2023)
stores a verdict per pair of replies as ``llm-pairwise:<key>``, under a signature with the same parameters
and ``orders``; it is shown as the rating judges are (``llm-pairwise (pairwise, smollm2-135m)``).

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

JUDGE_PREFIX = "llm-judge"
MASS_PREFIX = "llm-judge-mass"
PAIRWISE_PREFIX = "llm-pairwise"  # a pairwise judge: verdicts per pair of replies, not a score per reply
KEY_LENGTH = 16
_PREFIXES = "|".join(re.escape(prefix) for prefix in (MASS_PREFIX, JUDGE_PREFIX, PAIRWISE_PREFIX))
_NAME = re.compile(rf"({_PREFIXES}):([0-9a-f]{{{KEY_LENGTH}}})")


def judge_key(name: str) -> str | None:
    """The definition key of a judge's metric name (``llm-judge:<key>`` or ``llm-judge-mass:<key>``)."""
    prefix, separator, key = name.partition(":")
    if separator and prefix in (JUDGE_PREFIX, MASS_PREFIX) and len(key) == KEY_LENGTH:
        return key
    return None


def pairwise_judge_key(name: str) -> str | None:
    """The definition key of a pairwise judge's name (``llm-pairwise:<key>``), None for any other name."""
    prefix, separator, key = name.partition(":")
    return key if separator and prefix == PAIRWISE_PREFIX and len(key) == KEY_LENGTH else None


def is_judge(name: str) -> bool:
    """Whether ``name`` is a judge's score (``llm-judge:<key>``), not its mass on labels."""
    found = _NAME.fullmatch(name)
    return found is not None and found.group(1) == JUDGE_PREFIX


def is_label_mass(name: str) -> bool:
    """Whether ``name`` is a judge's mass on labels (``llm-judge-mass:<key>``): a companion, not a metric."""
    found = _NAME.fullmatch(name)
    return found is not None and found.group(1) == MASS_PREFIX


def shown_name(name: str) -> str:
    """The name a metric is shown by: a judge's without its key (``llm-judge``, ``llm-pairwise``), any other
    as it is."""
    found = _NAME.fullmatch(name)
    return found.group(1) if found is not None else name


def judge_signature_of_mass(text: str) -> str | None:
    """The signature of the judge's score whose mass on labels the signature ``text`` holds (the two share
    every parameter); None when ``text`` is not a mass signature."""
    name, separator, rest = text.partition("|")
    if not is_label_mass(name):
        return None
    return f"{JUDGE_PREFIX}:{name.partition(':')[2]}{separator}{rest}"


def named_part(value: str) -> tuple[str, str]:
    """``g-eval@3f2a91c0aa55ee11`` -> ("g-eval", "3f2a91c0aa55ee11"); a value without a hash -> (value, "")."""
    name, separator, digest = value.rpartition("@")
    return (name, digest) if separator and name else (value, "")


def judge_question(parameters: Mapping[str, str]) -> str:
    """The name of the question a judge asked, from its signature's parameters ("" when they lack it)."""
    return named_part(parameters.get("question", ""))[0]
