"""right after a large import, PostgreSQL's planner knows how many rows the import wrote.

An ANALYZE that autovacuum runs while an import is writing (its moment is its own) counts none of the rows
still uncommitted: it records the filled tables as empty, and the planner then joins a study's ratings to
its replies and contexts with nested loops that compare every pair. The worker test's count of 24,000
ratings ran into the 25 s statement timeout that way, once in several runs (88 s when left to finish).
Here that ANALYZE runs at a fixed moment, from another connection once every row is written, so the
outcome does not depend on autovacuum's timing. The import's own ANALYZE at the end of its transaction
(kernel/table_statistics.py) must leave the statistics counting the new rows.
"""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection, transaction

from annotation.importers import ImportFile
from annotation.models import DialogContext, Rating, Response
from annotation.services.imports import WRITING, study_import
from annotation.services.studies import study_create
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.skipif(
    "connection.vendor != 'postgresql'", reason="PostgreSQL's planner statistics (SQLite keeps none)"
)
TABLES = [model._meta.db_table for model in (DialogContext, Response, Rating)]


def _lines(count: int) -> bytes:
    return "".join(
        json.dumps(
            {
                "context_id": f"c{index}",
                "context": [f"question {index} ?"],
                "response": f"answer {index} .",
                "system": f"bot-{index % 3}",
                "ratings": {"appropriateness": [index % 3, (index + 1) % 3]},
                "annotators": ["ann", "bob"],
            }
        )
        + "\n"
        for index in range(count)
    ).encode("utf-8")


def _analyze_elsewhere() -> None:
    """Autovacuum's ANALYZE of the tables, in a session of its own (this thread's connection is another)."""
    failed: list[BaseException] = []

    def analyze() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE " + ", ".join(TABLES))
        except BaseException as error:  # reported by the test's thread
            failed.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=analyze)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the other session's ANALYZE did not finish in 60 s"
    assert not failed, f"the other session's ANALYZE failed: {failed}"


def _known_rows() -> dict[str, float]:
    """pg_class.reltuples: the rows the planner believes each table holds (-1: never analysed)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, reltuples FROM pg_class WHERE relname = ANY(%s)", [TABLES])
        return dict(cursor.fetchall())


def _last_analyze() -> dict[str, object]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, last_analyze FROM pg_stat_user_tables WHERE relname = ANY(%s)", [TABLES]
        )
        return dict(cursor.fetchall())


def _import(study, count: int, *, progress=None) -> None:
    study_import(
        study=study,
        format="jsonl",
        files=[ImportFile(name="outputs.jsonl", data=_lines(count))],
        progress=progress,
    )


def test_an_analyze_during_the_write_does_not_leave_the_study_planned_as_empty(transactional_db):
    study = study_create(owner=ResearcherFactory.create(username="stats-owner"), name="statistics")
    count = 2_000

    def progress(stage: str, done: int, total: int) -> None:
        if stage == WRITING and done == total:  # every row written, none committed yet
            _analyze_elsewhere()

    _import(study, count, progress=progress)

    known = _known_rows()
    actual = {
        DialogContext._meta.db_table: count,
        Response._meta.db_table: count,
        Rating._meta.db_table: 2 * count,
    }
    for table, rows in actual.items():
        assert abs(known[table] - rows) <= rows / 10, (
            f"the planner believes {table} holds {known[table]} rows"
        )
    ratings = Rating.objects.filter(response__context__study=study)
    plan = json.loads(ratings.order_by().explain(format="json"))[0]["Plan"]
    assert plan["Plan Rows"] >= count, f"the planner expects {plan['Plan Rows']} of {2 * count} ratings"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = '20s'")  # a pairwise plan fails here, not in minutes
        assert ratings.count() == 2 * count


def test_a_small_import_leaves_the_statistics_to_autovacuum(transactional_db):
    """Fewer rows than autovacuum's own rule would analyse a table for (50 in an empty table): no ANALYZE,
    so that small imports into large tables do not pay for one."""
    study = study_create(owner=ResearcherFactory.create(username="small-owner"), name="small")
    before = _last_analyze()

    _import(study, 10)

    assert _last_analyze() == before
    assert Rating.objects.filter(response__context__study=study).count() == 20
