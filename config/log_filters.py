"""Logging filters."""

from __future__ import annotations

import logging


class RefusalWithoutTraceback(logging.Filter):
    """django.request logs a refused request (403 PermissionDenied, 404, 400) with the exception's traceback,
    as if it were a bug. Keep the one line, with the exception's message, and drop the traceback; 5xx keep
    theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500 and record.exc_info:
            error = record.exc_info[1]
            if error is not None and str(error):
                record.msg = f"{record.msg} ({type(error).__name__}: %s)"
                record.args = (*(record.args if isinstance(record.args, tuple) else ()), str(error))
            record.exc_info = None
            record.exc_text = None
        return True
