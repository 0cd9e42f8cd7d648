"""Score signatures: one string that says how a score was computed, so that it can be reproduced.

Modelled on sacrebleu's signatures (``nrefs:1|case:lc|tok:13a|smooth:exp|version:2.6.0``): the metric
name, then ``key:value`` parameters in sorted key order, with ``version`` always last, e.g.
``bleu-2|refs:multi|smooth:method1|tok:en-v1|version:0.1.0``. Two scores are comparable exactly when
their signatures are equal; the signature is part of a stored score's unique key. The name is the first
field, so it may hold a colon (a metric variant, ``bert-ruber-unreferenced:bert-max-ce``); parameter names
may not.
"""

from __future__ import annotations

from collections.abc import Mapping

_SEPARATOR = "|"
_KEY_VALUE = ":"
_VERSION_KEY = "version"


class SignatureError(ValueError):
    """A name, key or value that cannot be written into (or read from) a signature."""


def metric_signature(name: str, params: Mapping[str, str]) -> str:
    """The canonical signature of metric ``name`` computed with ``params`` (same input, same string)."""
    _check_part(name, "metric name", forbid_colon=False)
    parts = [name]
    for key in sorted(params, key=lambda key: (key == _VERSION_KEY, key)):
        value = params[key]
        _check_part(key, "parameter name", forbid_colon=True)
        if not isinstance(value, str):
            raise SignatureError(f"parameter {key!r} must be a string, got {type(value).__name__} {value!r}")
        _check_part(value, f"value of {key!r}", forbid_colon=False, allow_empty=True)
        parts.append(f"{key}{_KEY_VALUE}{value}")
    return _SEPARATOR.join(parts)


def parse_metric_signature(text: str) -> tuple[str, dict[str, str]]:
    """The ``(name, params)`` a signature was made from; ``metric_signature(*parse(s)) == s``."""
    name, *pairs = text.split(_SEPARATOR)
    _check_part(name, "metric name", forbid_colon=False)
    params: dict[str, str] = {}
    for pair in pairs:
        key, colon, value = pair.partition(_KEY_VALUE)
        if not colon or not key:
            raise SignatureError(f"malformed signature {text!r}: {pair!r} is not key:value")
        if key in params:
            raise SignatureError(f"malformed signature {text!r}: {key!r} appears twice")
        params[key] = value
    return name, params


def _check_part(part: str, what: str, *, forbid_colon: bool, allow_empty: bool = False) -> None:
    if not part and not allow_empty:
        raise SignatureError(f"{what} must not be empty")
    if _SEPARATOR in part or (forbid_colon and _KEY_VALUE in part):
        forbidden = f"'{_SEPARATOR}'" + (f" or '{_KEY_VALUE}'" if forbid_colon else "")
        raise SignatureError(f"{what} {part!r} must not contain {forbidden}")


# What ``signature_implementation`` says of scores this project's own code computed (no ``impl:`` tool).
PROJECT_IMPLEMENTATION = "dialeval"


def signature_implementation(parameters: Mapping[str, str], origin: str = "builtin") -> str:
    """Which implementation made a signature's scores, for the ``implementation`` field of every report,
    CSV and API row: the tool it names (``impl:nlg-eval``), ``external`` for scores computed elsewhere and
    imported, ``plugin:<distribution>@<version>`` for a plugin's metric, else this project's own code
    (learned metrics, diversity metrics): ``dialeval``."""
    if origin == "external":
        return "external"
    if parameters.get("impl"):
        return str(parameters["impl"])
    if origin == "plugin" or parameters.get("plugin"):
        return f"plugin:{parameters.get('plugin', '')}".rstrip(":")
    return PROJECT_IMPLEMENTATION
