#!/usr/bin/env bash
# `make run`: the whole app on this machine, the same services docker-compose.yml starts, minus PostgreSQL
# (a SQLite file under var/): Redis broker, one Celery worker on both queues, Celery beat (the periodic
# recovery check), and the web server: gunicorn with WhiteNoise serving the collected static files, as in
# production (docker-compose.yml), since volunteers reach this server too.
#
# Ctrl-C (SIGINT), SIGTERM or SIGHUP stops everything this script started; a Redis it found already answering
# on the port is reused and left running. Run in the background (`nohup make run &`), stop it with
# `kill -TERM <pid>`: a background job ignores SIGINT. Re-running is safe (migrate and demo_setup are
# idempotent).
#
# Overrides: REDIS_URL (or REDIS_PORT, default 6389), WEB_PORT (default 8000), WEB_CONCURRENCY (gunicorn
# workers, default 2), DIALEVAL_RELOAD=1 (gunicorn restarts its workers when a source file changes: for
# development), DJANGO_SETTINGS_MODULE, DIALEVAL_VAR_DIR (default var/: the SQLite file, static files, logs,
# Redis's folder), and DIALEVAL_SKIP_SETUP=1 (skip scripts/setup.sh: a .venv that is kept by other means).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

say() { printf '[run] %s\n' "$*"; }

if [ "${DIALEVAL_SKIP_SETUP:-0}" != "1" ]; then
  bash scripts/setup.sh
fi

export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-config.settings.local}"
# METEOR's WordNet, built by setup.sh; nltk reads NLTK_DATA when it is first imported.
export NLTK_DATA="$root/var/nltk_data"
# Bytecode caches on (this machine kind sets PYTHONDONTWRITEBYTECODE): the web server, the worker and its
# pool processes would otherwise compile the project's modules at every start.
unset PYTHONDONTWRITEBYTECODE
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:${REDIS_PORT:-6389}/0}"
web_port="${WEB_PORT:-8000}"
python="$root/.venv/bin/python"
var_dir="${DIALEVAL_VAR_DIR:-$root/var}"
mkdir -p "$var_dir/log" "$var_dir/redis"

# Host and port of the broker, to decide whether to start one here.
read -r redis_host redis_port < <("$python" -c 'import sys, urllib.parse as u
url = u.urlsplit(sys.argv[1]); print(url.hostname or "127.0.0.1", url.port or 6379)' "$REDIS_URL")

say "migrating the database ($DJANGO_SETTINGS_MODULE)"
"$python" manage.py migrate --noinput | sed 's/^/[run]   /'
"$python" manage.py collectstatic --noinput --verbosity 0
# The demo logins and the API token go into the banner at the end, not into the middle of the start-up log.
demo_output="$("$python" manage.py demo_setup)"
printf '%s\n' "$demo_output" | sed -n '/^Demo study:/q;p' | sed 's/^/[run]   /'  # what it imported, if anything
demo_logins="$(printf '%s\n' "$demo_output" | sed -n '/^Demo study:/,$p')"

# --- process management ---------------------------------------------------------------------------------
# Every service runs in its own session (setsid), so its whole process group (Celery's pool children
# included) can be signalled at once, and a Ctrl-C reaches this script only: cleanup stops the services in
# order (web, beat, worker, then the broker they still talk to).
started_pids=()
started_names=()

start_service() {  # start_service NAME LOGFILE COMMAND...
  local name="$1" log="$2"
  shift 2
  if [ "$log" = "-" ]; then
    setsid "$@" </dev/null &
  else
    setsid "$@" </dev/null >>"$log" 2>&1 &
  fi
  started_pids=("$!" "${started_pids[@]}")  # newest first: stopped in reverse start order
  started_names=("$name" "${started_names[@]}")
}

# True while PID runs and is not yet a zombie (kill -0 succeeds on an unreaped zombie); /proc, no procps.
leader_running() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat="${stat##*) }"  # the fields after "(comm) ", which may itself hold spaces
  [ "${stat%% *}" != "Z" ]
}

cleaning=0
cleanup() {
  [ "$cleaning" = 1 ] && return
  cleaning=1
  trap '' INT TERM HUP
  local i pid
  for i in "${!started_pids[@]}"; do
    pid="${started_pids[$i]}"
    if leader_running "$pid"; then
      say "stopping ${started_names[$i]} (process group $pid)"
      kill -TERM -- "-$pid" 2>/dev/null || true
      # Celery finishes its current task on TERM (warm shutdown); give it 20 s.
      for _ in $(seq 1 100); do
        leader_running "$pid" || break
        sleep 0.2
      done
    fi
    kill -KILL -- "-$pid" 2>/dev/null || true  # whatever is left of the group (e.g. orphaned pool processes)
    wait "$pid" 2>/dev/null || true
  done
  say "stopped"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

redis_answers() {
  "$python" -c 'import sys, redis
try:
    sys.exit(0 if redis.Redis.from_url(sys.argv[1], socket_timeout=1).ping() else 1)
except Exception:
    sys.exit(1)' "$REDIS_URL"
}

wait_until() {  # wait_until SECONDS PID DESCRIPTION COMMAND...: poll COMMAND while PID lives
  local seconds="$1" pid="$2" what="$3"
  shift 3
  for _ in $(seq 1 $((seconds * 5))); do
    "$@" && return 0
    if ! leader_running "$pid"; then
      say "$what exited during start-up"
      return 1
    fi
    sleep 0.2
  done
  say "$what did not come up within ${seconds}s"
  return 1
}

# --- Redis ----------------------------------------------------------------------------------------------
if redis_answers; then
  say "reusing the Redis already answering at $REDIS_URL (left running on exit)"
elif [ "$redis_host" = "127.0.0.1" ] || [ "$redis_host" = "localhost" ]; then
  say "starting redis-server on 127.0.0.1:$redis_port (log $var_dir/log/redis.log)"
  start_service redis "$var_dir/log/redis.log" redis-server --bind 127.0.0.1 --port "$redis_port" \
    --dir "$var_dir/redis" --save "" --appendonly yes --appendfsync everysec
  wait_until 15 "${started_pids[0]}" "redis-server" redis_answers || { tail -5 "$var_dir/log/redis.log"; exit 1; }
else
  say "no Redis answers at $REDIS_URL and it is not on this machine: start it, or unset REDIS_URL"
  exit 1
fi

# --- Celery worker --------------------------------------------------------------------------------------
say "starting the Celery worker on queues cpu,gpu (log $var_dir/log/worker.log)"
start_service worker "$var_dir/log/worker.log" "$root/.venv/bin/celery" -A config.celery_app worker \
  -Q cpu,gpu --concurrency 2 --loglevel INFO
worker_pid="${started_pids[0]}"

# --- Celery beat ----------------------------------------------------------------------------------------
# One beat per broker: it sends the periodic tasks of CELERY_BEAT_SCHEDULE (the recovery check) to the worker.
say "starting Celery beat, the periodic recovery check (log $var_dir/log/beat.log)"
start_service beat "$var_dir/log/beat.log" "$root/.venv/bin/celery" -A config.celery_app beat \
  --loglevel INFO --schedule "$var_dir/celerybeat-schedule"

# --- default learned-metric models ----------------------------------------------------------------------
# RUBER / BERT-RUBER need a trained model; train the defaults from DailyDialog when the corpus is there and
# a default is missing (a kind that has one is skipped at once). DIALEVAL_TRAIN_DEFAULT_MODELS=0 skips it.
shared_data="${DIALEVAL_SHARED_DATA:-$root/../shared/data}"
train_banner=""  # the banner names the training's log only when the training was started
if [ "${DIALEVAL_TRAIN_DEFAULT_MODELS:-1}" = "1" ] && [ -d "$shared_data/dailydialog/train" ]; then
  say "training any missing default RUBER / BERT-RUBER / MaUde / Cross-RUBER model in the background (log $var_dir/log/train-default-models.log)"
  start_service train "$var_dir/log/train-default-models.log" "$python" manage.py train_default_models
  train_banner="
               default models: $var_dir/log/train-default-models.log (learned metrics wait for it)"
fi

# --- web server -----------------------------------------------------------------------------------------
# gunicorn as in production (config/gunicorn_conf.py: worker timeout, access log); DIALEVAL_RELOAD=1 adds
# --reload. Static files: collected above, served by WhiteNoise with the production storage.
reload_note=""
[ "${DIALEVAL_RELOAD:-0}" = "1" ] && reload_note=", reloading on code changes"
say "starting gunicorn on 127.0.0.1:$web_port (${WEB_CONCURRENCY:-2} workers$reload_note; log $var_dir/log/web.log)"
start_service web "$var_dir/log/web.log" "$root/.venv/bin/gunicorn" -c python:config.gunicorn_conf \
  config.wsgi:application --bind "127.0.0.1:$web_port"
web_pid="${started_pids[0]}"
web_answers() { curl -s -o /dev/null "http://127.0.0.1:$web_port/accounts/login/"; }
wait_until 60 "$web_pid" "the web server" web_answers || { tail -20 "$var_dir/log/web.log"; exit 1; }

cat <<EOF

  dialeval is running (Ctrl-C stops everything started here; in the background: kill -TERM $$)
    app:       http://127.0.0.1:$web_port/
    admin:     http://127.0.0.1:$web_port/admin/
    API docs:  http://127.0.0.1:$web_port/api/docs/   (schema: /api/schema/, ReDoc: /api/redoc/)
    health:    http://127.0.0.1:$web_port/health/   (workers: /health/workers/)
    logs:      web $var_dir/log/web.log; worker $var_dir/log/worker.log; beat $var_dir/log/beat.log;
               redis $var_dir/log/redis.log$train_banner
    broker:    $REDIS_URL    database: ${DATABASE_URL:-$var_dir/dialeval.sqlite3}

$(printf '%s\n' "$demo_logins" | sed 's/^/  /')

EOF

# Return when the web server or the worker ends (or a signal arrives); cleanup stops the rest.
set +e
wait -n "$web_pid" "$worker_pid"
status=$?
set -e
kill -0 "$web_pid" 2>/dev/null || say "the web server exited (status $status)"
kill -0 "$worker_pid" 2>/dev/null || say "the Celery worker exited (status $status); see $var_dir/log/worker.log"
exit "$status"
