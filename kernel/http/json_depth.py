"""How deep a JSON text nests its arrays and objects, counted before it is parsed.

Python's json module parses each array or object with a recursive call: a request body of 1,000 ``[``
(2 KB) exhausted the recursion limit, a RecursionError and a 500. The API's JSON parser
(kernel/http/api_formats.py) refuses a body nested deeper than MAX_API_JSON_DEPTH before parsing it; no request
of the API nests more than a few levels.

The count runs at C speed, so that a large body (a scoring batch) costs little: a regex drops the strings
(a bracket inside one does not nest), another everything but brackets, and ``accumulate`` keeps the
running depth. For invalid JSON (an unclosed string or bracket) it is an upper bound of what the parser
would reach before it stops.
"""

from __future__ import annotations

import re
from itertools import accumulate

MAX_API_JSON_DEPTH = 100  # as deep as a line of an import file may nest (kernel/importing/json_lines.py)

# A string with its escapes; the closing quote is optional so that an unclosed string matches to the end
# (the match never fails and is retried further on, which would make the scan quadratic).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth_beyond(text: str, limit: int = MAX_API_JSON_DEPTH) -> int | None:
    """How deep ``text`` nests arrays and objects (strings left out) when that is deeper than ``limit``;
    None when it is not."""
    if text.count("[") + text.count("{") <= limit:  # too few brackets to nest deeper: no scan
        return None
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = max(accumulate(map(_STEP.__getitem__, brackets)), default=0)
    return depth if depth > limit else None
