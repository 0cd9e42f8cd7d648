"""Current planner statistics for the tables a bulk write has just filled, on PostgreSQL.

PostgreSQL's planner sizes each table from ``pg_class.reltuples`` (rows per page, scaled to the table's
pages now) and ``pg_statistic``, which VACUUM and ANALYZE write; autovacuum runs them when a table has
changed enough, at a moment of its own. One that runs while a long import is writing does not count the
rows that import has not committed yet: it records the table as empty over all its new pages
(``reltuples`` 0), and from then on the planner estimates one row in each filled table. For the count of a
study's ratings (ratings, replies, contexts joined) it then picks nested loops that compare every rating
with every reply: 12,000 imported replies took 88 s (the tests' PostgreSQL pass saw the web processes'
25 s statement timeout cancel it), against 18 ms with current statistics. Nothing corrects this before
autovacuum looks at the tables again, up to ``autovacuum_naptime`` (a minute) after the commit.

:func:`table_statistics_refresh` is the writer's own ANALYZE, at the end of its transaction, of the tables
it filled enough that autovacuum would analyse them anyway (its default rule: at least
``autovacuum_analyze_threshold`` + ``autovacuum_analyze_scale_factor`` x the rows the table had). Why
there and then:

* ANALYZE counts the rows its own transaction inserted, so the statistics are right the moment the rows
  commit: no reader ever plans the new rows with the old numbers;
* it holds the tables' SHARE UPDATE EXCLUSIVE lock until the commit, so no autovacuum (which skips a
  locked table) can record them empty again in between; one already running when the ANALYZE starts is
  cancelled by PostgreSQL after ``deadlock_timeout``, as autovacuum always yields. That lock does not
  conflict with reads or row writes, only with VACUUM, ANALYZE and index builds, which wait for the commit;
* it is cheap: ANALYZE reads a sample of at most 300 x ``default_statistics_target`` rows (30,000) per
  table whatever its size (the three tables above, together: 40 to 90 ms), and the rule leaves out the tables a
  small import hardly changes;
* it can cost the import nothing: it runs under a savepoint, and an error (a lock it waited for past
  ``lock_timeout``) rolls back only the ANALYZE, leaving the statistics to autovacuum as before.

Should the writer roll back after it, ``reltuples`` (written in place, not transactionally) overstates the
table until autovacuum removes the dead rows; an overestimate only makes the planner choose hash joins.
SQLite keeps no statistics unless told to (we never run its ANALYZE), so it has nothing to refresh.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.db import DatabaseError, connection, transaction
from django.db.models import Model

logger = logging.getLogger(__name__)

# For each table: its name, the rows it had as the statistics knew them (-1 when never analysed), and the
# server's autovacuum rule for an ANALYZE (per-table storage parameters aside).
_KNOWN_ROWS = """
SELECT name, greatest(coalesce(c.reltuples, 0), 0),
       current_setting('autovacuum_analyze_threshold')::float8,
       current_setting('autovacuum_analyze_scale_factor')::float8
FROM unnest(%s::text[]) AS name LEFT JOIN pg_class c ON c.oid = to_regclass(quote_ident(name))
"""


def table_statistics_refresh(*, written: Mapping[type[Model], int]) -> list[str]:
    """ANALYZE, on PostgreSQL and inside the current transaction, the tables of the models in ``written``
    (model: rows written to it) that the write changed enough (module docstring); the tables analysed."""
    if connection.vendor != "postgresql":
        return []
    rows: dict[str, int] = {}
    for model, count in written.items():
        if count > 0:
            rows[model._meta.db_table] = rows.get(model._meta.db_table, 0) + count
    if not rows:
        return []
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_KNOWN_ROWS, [sorted(rows)])
            stale = sorted(
                name
                for name, known, threshold, scale in cursor.fetchall()
                if rows[name] >= threshold + scale * known
            )
            if stale:  # one statement, in name order: two writers lock the tables in the same order
                cursor.execute("ANALYZE " + ", ".join(connection.ops.quote_name(name) for name in stale))
    except DatabaseError as error:
        logger.warning("could not analyse %s (autovacuum will): %s", ", ".join(sorted(rows)), error)
        return []
    return stale
