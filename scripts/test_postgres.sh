#!/usr/bin/env bash
# Run the database-facing tests on PostgreSQL (the production database) in a private, throwaway cluster:
# initdb into a temporary folder, a server on a free port of 127.0.0.1, trust auth, removed afterwards.
#
#   scripts/test_postgres.sh [pytest options]
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[postgres] %s\n' "$*"; }

pg_bin=""
for dir in /usr/local/bin /usr/lib/postgresql/*/bin; do
  if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then pg_bin="$dir"; break; fi
done
if [ -z "$pg_bin" ]; then
  echo "[postgres] initdb/pg_ctl not found: install Debian's postgresql package (scripts/setup.sh does)" >&2
  exit 1
fi

workdir="$(mktemp -d /tmp/dialeval-pg.XXXXXX)"
port="$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# initdb refuses to run as root: run the server as the postgres user when we are root.
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$workdir"
  as_owner=(runuser -u postgres --)
fi

cleanup() {
  "${as_owner[@]}" "$pg_bin/pg_ctl" -D "$workdir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$workdir"
}
trap cleanup EXIT

say "initdb in $workdir, server on 127.0.0.1:$port"
"${as_owner[@]}" "$pg_bin/initdb" -D "$workdir/data" -U dialeval -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${as_owner[@]}" "$pg_bin/pg_ctl" -D "$workdir/data" -l "$workdir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $workdir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
  start >/dev/null

export DATABASE_URL="postgres://dialeval@127.0.0.1:$port/dialeval"
# The tests that touch the database (--database-only: tests/conftest.py deselects those that never open
# a connection, e.g. the metric and statistics cores, which behave the same on any database); extra
# arguments are pytest options. Tests marked language_model (a model loaded for the test: the judges' local
# readings, previews, a worker killed mid-run) or model_training (a Cross-RUBER or MaUde model trained for
# the module, through the command and the API) run once, in the SQLite pass; the judges' tests that store
# answers and pairwise verdicts (ON CONFLICT) run here too. Browser tests run once, in the SQLite pass:
# they check what the pages do in Chromium, and every view and service they reach runs here through the page and API tests. So do the
# checks on the real corpora of ../shared/data (marker shared_data): their figures (counts, correlations)
# do not depend on the database, and the import code they go through runs here on the small import files.
# The fault tests that do not depend on the database run once too, in the SQLite pass: the Redis outages
# (broker and scoring), the worker killed whole and the chunk that keeps killing its worker, and the
# writer that commits every 0.3 s (SQLite's lock is its point). A pool process killed mid-run, where the
# chunk claims meet PostgreSQL's row locks, runs on both; so do the identical starts (tests/scoring). The
# OpenAPI fuzzing (schemathesis, 42-51 s here; DIALEVAL_SCHEMATHESIS_EXAMPLES) runs here too: its
# crafted text reaches the database, and PostgreSQL refuses what SQLite stores (a NUL character in a path
# or query once answered 500 only here). As in scripts/test.sh, the tests marked serial run alone, after
# the parallel pass.
# schemathesis's fuzzing phase draws fewer examples per operation here than in the SQLite pass (its examples
# and coverage phases, the schema's own examples and every boundary case, run in full on both): what the
# PostgreSQL pass adds is the database's answers to crafted input, not more random requests.
export DIALEVAL_SCHEMATHESIS_EXAMPLES="${DIALEVAL_SCHEMATHESIS_EXAMPLES:-4}"
pg_pytest() {
  .venv/bin/pytest "$@" --database-only \
    tests/annotation tests/scoring tests/correlation tests/api tests/web tests/integration \
    --ignore=tests/integration/test_scoring_redis_outage.py --ignore=tests/integration/test_broker_outage.py \
    --deselect tests/integration/test_scoring_faults.py::test_a_run_survives_sigkill_of_the_whole_worker_and_an_immediate_restart \
    --deselect tests/integration/test_scoring_faults.py::test_a_chunk_that_always_kills_its_worker_stops_after_the_attempt_cap \
    --deselect tests/integration/test_scoring_faults.py::test_a_run_succeeds_while_another_process_commits_every_300_ms
}
parallel=0
serial=0
pg_pytest -n "${DIALEVAL_TEST_WORKERS:-0}" --dist loadfile "${@}" \
  -m "not browser and not shared_data and not serial and not language_model and not model_training" \
  || parallel=$?
pg_pytest "${@}" -m "serial and not browser and not shared_data and not language_model and not model_training" || serial=$?
# pytest's 5 is "no tests collected": fine for one of the two (a selection of tests with or without the
# serial ones), a failure when neither ran a test.
if [ "$parallel" -eq 5 ] && [ "$serial" -eq 5 ]; then exit 5; fi
[ "$parallel" -eq 5 ] && parallel=0
[ "$serial" -eq 5 ] && serial=0
[ "$parallel" -eq 0 ] && [ "$serial" -eq 0 ] && exit 0
exit 1
