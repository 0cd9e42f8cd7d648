"""How a failure is written on a run or chunk: one readable line first (what the page shows), the place
(chunk, reply) next, then the end of the traceback."""

from __future__ import annotations

import traceback

_TRACEBACK_TAIL_CHARS = 3000


def error_summary(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__


def error_text(error: BaseException, *, where: str = "") -> str:
    tail = "".join(traceback.format_exception(error))[-_TRACEBACK_TAIL_CHARS:]
    place = f"in {where}\n\n" if where else ""
    return f"{error_summary(error)}\n\n{place}{tail}"
