"""Field lengths of the data model, repeated here so that the parsers (which never touch Django) can
reject an over-long name with a clear message instead of a database error. A test keeps them equal
to the model's ``max_length``."""

from __future__ import annotations

SYSTEM_NAME_MAX = 120  # System.name
PSEUDONYM_MAX = 120  # Annotator.pseudonym
EXTERNAL_ID_MAX = 200  # DialogContext.external_id, Response.external_id
QUESTION_NAME_MAX = 60  # Question.name
