#!/usr/bin/env bash
# `make test` (and CI through .ci/run): set-up, then every check in order: ruff lint, ruff format, mypy,
# the import contracts, and the whole pytest suite (unit, integration with real Redis and Celery, browser
# tests in headless Chromium) on SQLite, then the suites that touch the database again on a throwaway
# PostgreSQL cluster (scripts/test_postgres.sh), each pass in 2 processes (pytest-xdist). The pytest steps include schemathesis against a live test server
# (tests/api/test_openapi_schemathesis.py, every check on, 35-51 s per database on two cores; DIALEVAL_SCHEMATHESIS_EXAMPLES
# sets its examples per operation, 15 by default). Every step runs even after a failure, so one run reports them all; the exit
# status is non-zero when any step failed.
#
#   scripts/test.sh [--lint-only] [PYTEST_ARGS...]    --lint-only (make lint) skips pytest and chromium
set -euo pipefail
cd "$(dirname "$0")/.."

lint_only=0
if [ "${1:-}" = "--lint-only" ]; then
  lint_only=1
  shift
fi

if [ "$lint_only" = 1 ]; then
  bash scripts/setup.sh
else
  bash scripts/setup.sh --with-browser
fi

export PATH="$PWD/.venv/bin:$PATH"
export NLTK_DATA="$PWD/var/nltk_data"  # METEOR's WordNet, built by setup.sh
# Bytecode caches on: with PYTHONDONTWRITEBYTECODE set (this machine kind sets it) every process of the suite
# (pytest and its workers, Celery workers, manage.py commands) compiled the project's modules and tests again,
# 8-9 s of CPU per pytest process (collection: 17 s with it set, 8 s without). The caches go to __pycache__
# folders, which git ignores; the installed packages have theirs from pip.
unset PYTHONDONTWRITEBYTECODE
# pytest runs in 2 processes (pytest-xdist, a file's tests in one process, so module fixtures are built once):
# alone, the suite keeps one core busy and leaves the other idle while it waits on its database, its worker
# processes and Chromium. DIALEVAL_TEST_WORKERS=0 runs it in one process; on one core it does so by itself.
if [ -z "${DIALEVAL_TEST_WORKERS:-}" ]; then
  DIALEVAL_TEST_WORKERS=$(( $(nproc) >= 2 ? 2 : 0 ))
fi
export DIALEVAL_TEST_WORKERS

passed=()
failed=()
sqlite_passes() {  # the selection in $DIALEVAL_TEST_WORKERS processes, then its serial tests alone
  local parallel=0 serial=0
  pytest -n "$DIALEVAL_TEST_WORKERS" --dist loadfile -m "not serial" "$@" || parallel=$?
  # The tests that keep both cores busy themselves (marker serial), alone.
  pytest -m serial "$@" || serial=$?
  # pytest's 5 is "no tests collected": fine for one of the two, a failure when neither ran a test.
  if [ "$parallel" -eq 5 ] && [ "$serial" -eq 5 ]; then return 5; fi
  [ "$parallel" -eq 5 ] && parallel=0
  [ "$serial" -eq 5 ] && serial=0
  [ "$parallel" -eq 0 ] && [ "$serial" -eq 0 ] && return 0
  return 1
}
run_step() {  # run_step NAME COMMAND...
  local name="$1" started status
  shift
  printf '\n[test] === %s: %s\n' "$name" "$*"
  started=$SECONDS
  set +e
  "$@"
  status=$?
  set -e
  # pytest's 5 ("no tests collected") is already non-zero: an empty suite fails the run.
  if [ "$status" -eq 0 ]; then
    passed+=("$name")
    printf '[test] --- %s passed (%ds)\n' "$name" $((SECONDS - started))
  else
    failed+=("$name")
    printf '[test] --- %s FAILED with status %d (%ds)\n' "$name" "$status" $((SECONDS - started))
  fi
}

run_step "ruff check" ruff check .
run_step "ruff format" ruff format --check .
run_step "mypy" mypy .
run_step "import contracts" lint-imports
if [ "$lint_only" = 0 ]; then
  run_step "pytest" sqlite_passes "$@"
  # The production database: the suites that touch the database again, on a throwaway PostgreSQL cluster.
  run_step "pytest on PostgreSQL" bash scripts/test_postgres.sh "$@"
fi

comma_list() { local out="" item; for item in "$@"; do out+="${out:+, }$item"; done; echo "$out"; }
echo
if [ "${#failed[@]}" -eq 0 ]; then
  echo "[test] ALL PASSED: $(comma_list "${passed[@]}") (${SECONDS}s)"
else
  echo "[test] FAILED: $(comma_list "${failed[@]}"); passed: $(comma_list "${passed[@]}") (${SECONDS}s)"
  exit 1
fi
