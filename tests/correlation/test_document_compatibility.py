"""The report document keeps its shape: the demo study's document, computed now, holds every field
of the document stored before the house was reordered, with the same values, in the same order; a field may
be added (documents grow, fields are never renamed), none may change. Numbers are compared to 1e-12 (relative):
their last bits follow numpy's and scipy's releases (scipy 1.17's pearsonr p-values moved in the 15th digit),
and a study's numbers in the 12th digit are the same numbers. ``document_version`` may only grow (version 3,
ranks by the WMT metrics task's rule; on this study they are the same).

The stored document (tests/data/report_document_demo.json) was computed by the code before the house was
reordered, from the project's own demo sample (annotation/demo_sample.py: 12 contexts x 3 systems, 3 raters,
0-2), scored with fast baselines, report options resamples=200, seed=7. ``code_version`` is left out: it names
the code.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from correlation.report.cache import report_current
from stats.report.types import ReportOptions
from tests.correlation.builders import scored_demo_study
from tests.factories import ResearcherFactory

STORED = Path(__file__).resolve().parent.parent / "data" / "report_document_demo.json"
METRICS = ["bleu-1", "bleu-2", "bleu-4", "rouge-l", "meteor", "embedding-average", "distinct-1", "distinct-2"]

pytestmark = pytest.mark.django_db


def _restricted(new: Any, old: Any) -> Any:
    """``new`` with only the keys ``old`` has (recursively, in ``new``'s order), so that added fields do not
    count and every old field is compared where it stands."""
    if isinstance(new, dict) and isinstance(old, dict):
        return {key: _restricted(value, old[key]) for key, value in new.items() if key in old}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [_restricted(value, before) for value, before in zip(new, old, strict=True)]
    return new


def test_the_demo_studys_document_is_the_stored_one_plus_added_fields(
    django_capture_on_commit_callbacks,
) -> None:
    owner = ResearcherFactory.create(username="alice")
    study = scored_demo_study(owner, [(METRICS, "multi", "")], django_capture_on_commit_callbacks)
    document = dict(report_current(study=study, options=ReportOptions(resamples=200, seed=7)).document or {})
    document.pop("code_version", None)
    stored_text = STORED.read_text(encoding="utf-8")
    stored = json.loads(stored_text)
    # data_version counts the study's writes, each scoring chunk's store among them: it follows how the run
    # was split into chunks (metric families that score the same replies share theirs), not what
    # the document computed. It names the study's version as the report was computed; the rest is compared.
    assert document["data_version"] == study.data_version
    document["data_version"] = stored["data_version"]
    # The study's id is the database's: 1 on a fresh SQLite test database, whatever PostgreSQL's sequence
    # (not rolled back between tests) gives after the suite's earlier studies.
    assert document["study"] == study.pk
    document["study"] = stored["study"]
    assert document["document_version"] >= stored["document_version"]
    document["document_version"] = stored["document_version"]
    # jsonb keeps its own key order (shorter keys first), as it did before the house was reordered: the stored
    # snapshot and the API's answer come back in that order. The builder's order is checked on SQLite only.
    ordered = connection.vendor != "postgresql"
    if ordered:
        assert list(document)[: len(stored)] == list(stored)  # every section, where it was
        assert list(json.loads(stored_text)) == list(stored)
    differences: list[str] = []
    _same(_restricted(json.loads(json.dumps(document)), stored), stored, "", ordered, differences)
    assert not differences, "\n".join(differences[:20])


def _same(new: Any, old: Any, path: str, ordered: bool, differences: list[str]) -> None:
    """Every field of ``old`` in ``new`` (in the same order when ``ordered``), numbers to 1e-12."""
    if isinstance(old, dict):
        if not isinstance(new, dict) or set(new) != set(old) or (ordered and list(new) != list(old)):
            differences.append(
                f"{path}: keys {list(old)} became {list(new) if isinstance(new, dict) else new}"
            )
            return
        for key in old:
            _same(new[key], old[key], f"{path}.{key}", ordered, differences)
    elif isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            differences.append(f"{path}: {old!r} became {new!r}")
            return
        for index, (value, before) in enumerate(zip(new, old, strict=True)):
            _same(value, before, f"{path}[{index}]", ordered, differences)
    elif isinstance(old, float) and isinstance(new, float):
        if not math.isclose(new, old, rel_tol=1e-12, abs_tol=1e-15):
            differences.append(f"{path}: {old!r} became {new!r}")
    elif type(new) is not type(old) or new != old:
        differences.append(f"{path}: {old!r} became {new!r}")
