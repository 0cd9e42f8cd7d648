"""Annotation load benchmark: simulated annotators against a real server on loopback.

The load is driven by locust (bench/annotation_locustfile.py, headless, one process on loopback): one user
per annotator, each with its own API token, that for ``--seconds`` asks for its next item
(``GET /api/work/<study>/next/?kind=rate``, "next item"), thinks (uniformly 0.5-1.5 times ``--think``
seconds; the users start spread over the first think time), and submits a rating
(``POST /api/work/<study>/assignments/<id>/rating/``, "submit"). When the run time is over, a user in the
middle of an item still submits it (locust's stop timeout), then stops. The server is gunicorn (the
production shape in docker-compose.yml) with ``--workers`` sync workers, ``--preload`` and production
settings (DEBUG off), on a fresh database: a SQLite file, or a throwaway PostgreSQL cluster (initdb on a
free port, removed afterwards).

Reported per endpoint: requests, requests per second and failures (client side, locust), the server's own
time per request (gunicorn's access log, ``%(D)s``: microseconds in the sync worker from the parsed
request head to the last byte of the response written) as p50/p95/p99, and the latency the clients observed (locust's stats; includes queueing for a
free worker and the loopback round trip) as p50/p95/p99. Then the database is checked against what the
clients were told (every acknowledged submit is written to a per-run file by the locustfile): every
acknowledged submit is stored with the values sent (lost = acknowledged but missing), nothing is stored
twice (duplicates per annotator, reply and question), no reply has more raters than k and no item more
answers than it wants, and every item's ``taken`` counter equals its active plus done assignments. The
command exits 1 when this check fails (or when no submit was acknowledged at all).

The machine's speed is printed with the table (bench/machine_speed.py): a fixed Python workload timed
before and after the run, and the share of the cores' time that was busy and that the host stole while
locust ran. The machine's speed drifts, so compare runs only with these readings beside them.

Targets: under 50 concurrent annotators, the server p95 of "next item" and of "submit" is below 50 ms on
PostgreSQL and below 100 ms on SQLite; zero lost and zero duplicate ratings.

    .venv/bin/python -m bench.annotation_load [--database sqlite|postgres] [--annotators 50]
        [--seconds 60] [--think 0.5] [--spawn-rate N] [--workers 4] [--contexts 3000] [--k 3]

The run's files (gunicorn's logs, locust's CSV and log, the acknowledged submits) stay in a temporary
folder whose path is printed at the end.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from bench.machine_speed import CpuShares, cpu_shares, read_cpu_ticks, time_workload

REPO = Path(__file__).resolve().parent.parent
PYTHON = Path(sys.executable)
GUNICORN = PYTHON.parent / "gunicorn"
LOCUST = PYTHON.parent / "locust"
LOCUSTFILE = Path(__file__).resolve().parent / "annotation_locustfile.py"
# The locustfile reads the run's JSON file from this variable (bench.annotation_locustfile.CONFIG_VARIABLE;
# not imported from there: importing locust monkey-patches this process for gevent).
CONFIG_VARIABLE = "DIALEVAL_LOAD_CONFIG"
REQUEST_TIMEOUT = 30  # the locustfile's per-request timeout, seconds
SECRET = "bench-only-secret-key-not-for-production-0123456789"
ACCESS_LOG_FORMAT = "%(m)s %(U)s %(s)s %(D)s"  # method, path, status, microseconds in the worker
ENDPOINTS = {
    "next item": ("GET", re.compile(r"/api/work/\d+/next/")),
    "submit": ("POST", re.compile(r"/api/work/\d+/assignments/\d+/rating/")),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pg_bin() -> Path:
    for candidate in [Path("/usr/local/bin"), *sorted(Path("/usr/lib/postgresql").glob("*/bin"))]:
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    raise SystemExit("initdb/pg_ctl not found: install Debian's postgresql package (scripts/setup.sh does)")


@contextmanager
def database(kind: str) -> Iterator[str]:
    """A DATABASE_URL for a fresh database of ``kind``; removed afterwards."""
    workdir = Path(tempfile.mkdtemp(prefix="dialeval-load-"))
    try:
        if kind == "sqlite":
            yield f"sqlite:///{workdir / 'load.sqlite3'}"
            return
        pg_bin, port = _pg_bin(), free_port()
        as_owner: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            shutil.chown(workdir, "postgres")
            as_owner = ["runuser", "-u", "postgres", "--"]
        data = workdir / "data"
        subprocess.run(
            [
                *as_owner,
                str(pg_bin / "initdb"),
                "-D",
                str(data),
                "-U",
                "dialeval",
                "-A",
                "trust",
                "-E",
                "UTF8",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {workdir} -c max_connections=200"
        pg_ctl = [*as_owner, str(pg_bin / "pg_ctl"), "-D", str(data)]
        subprocess.run(
            [*pg_ctl, "-l", str(workdir / "server.log"), "-w", "-o", options, "start"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        try:
            yield f"postgres://dialeval@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                [*as_owner, str(pg_bin / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def server_environment(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": SECRET,
        "DATABASE_URL": database_url,
        "DB_CONN_MAX_AGE": "60",  # gunicorn workers keep their connection, as in production
        "DJANGO_SECURE_COOKIES": "0",
    }


def prepare(database_url: str, *, annotators: int, contexts: int, k: int) -> tuple[int, list[str]]:
    """Migrate, then create a study of ``contexts`` x 2 replies and ``annotators`` invited annotators."""
    os.environ.update(server_environment(database_url))
    import django

    django.setup()
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from annotation.models import DialogContext, Response, System
    from annotation.services.annotators import annotator_join
    from annotation.services.joining import annotator_consent
    from annotation.services.studies import study_create
    from annotation.services.work_items import work_items_sync
    from tests.factories import ResearcherFactory, UserFactory

    call_command("migrate", verbosity=0)
    owner = ResearcherFactory.create(username="load-researcher")
    study = study_create(owner=owner, name="load benchmark", ratings_per_item=k)
    bots = [System.objects.create(study=study, name=name) for name in ("bot-a", "bot-b")]
    DialogContext.objects.bulk_create(
        DialogContext(
            study=study,
            external_id=f"c{index}",
            position=index,
            turns=[{"speaker": "A", "text": f"what about question {index} ?"}],
        )
        for index in range(contexts)
    )
    Response.objects.bulk_create(
        Response(context=context, system=bot, text=f"{bot.name} answers {context.external_id} .")
        for context in DialogContext.objects.filter(study=study)
        for bot in bots
    )
    work_items_sync(study=study)
    from django.db import connection

    if connection.vendor == "postgresql":  # planner statistics, as autovacuum keeps them in production
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    tokens = []
    for index in range(annotators):
        user = UserFactory.create(username=f"load-annotator-{index:03d}")
        # Volunteers accept the consent form before their first item (the API answers 403 until then).
        annotator_consent(annotator=annotator_join(token=study.invite_token, user=user))
        tokens.append(Token.objects.create(user=user).key)
    return study.pk, tokens


@contextmanager
def gunicorn(database_url: str, port: int, workers: int, log: Path, access_log: Path) -> Iterator[None]:
    bind = f"127.0.0.1:{port}"
    with log.open("wb") as out:
        process = subprocess.Popen(
            # --preload: the app (config/wsgi.py imports every view) loads before the workers fork, so
            # the port opens only when every worker can answer at once.
            [
                str(GUNICORN),
                "config.wsgi:application",
                "--preload",
                "--workers",
                str(workers),
                "--bind",
                bind,
                "--access-logfile",
                str(access_log),
                "--access-logformat",
                ACCESS_LOG_FORMAT,
            ],
            cwd=REPO,
            env=server_environment(database_url),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if process.poll() is not None:
                        raise SystemExit(f"gunicorn exited:\n{log.read_text()[-3000:]}") from None
                    time.sleep(0.2)
            yield
        finally:
            process.terminate()
            process.wait(timeout=30)


def locust_command(
    *, port: int, users: int, spawn_rate: float, seconds: int, think: float, prefix: Path
) -> list[str]:
    # A user still in the middle of an item when the run time is over gets to submit it: the longest
    # think time plus one request's timeout (and a margin) before locust stops it by force.
    stop_timeout = math.ceil(1.5 * think) + REQUEST_TIMEOUT + 5
    return [
        str(LOCUST),
        "-f",
        str(LOCUSTFILE),
        "--headless",
        "-u",
        str(users),
        "-r",
        f"{spawn_rate:g}",
        "--run-time",
        f"{seconds}s",
        "--host",
        f"http://127.0.0.1:{port}",
        "--csv",
        str(prefix),
        "--only-summary",
        "--stop-timeout",
        str(stop_timeout),
        "--exit-code-on-error",
        "0",  # failed requests are reported below; a non-zero exit means locust itself failed
    ]


def run_locust(command: list[str], *, config: Path, log: Path) -> float:
    """Run locust to the end; its wall time in seconds."""
    started = time.monotonic()
    with log.open("wb") as out:
        finished = subprocess.run(
            command,
            cwd=REPO,
            env={**os.environ, CONFIG_VARIABLE: str(config)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    if finished.returncode != 0:
        raise SystemExit(f"locust failed (exit {finished.returncode}):\n{log.read_text()[-3000:]}")
    return time.monotonic() - started


@dataclass(frozen=True)
class ClientStats:
    """One row of locust's ``<prefix>_stats.csv`` (times in ms, as locust rounds them)."""

    requests: int
    failures: int
    per_second: float
    p50: float
    p95: float
    p99: float


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # "N/A" where there were no requests
        return float("nan")


def client_stats(prefix: Path) -> tuple[dict[str, ClientStats], Counter[str]]:
    """Per request name (and "Aggregated"), and the failures by "name: error"."""
    stats = {}
    with Path(f"{prefix}_stats.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            stats[row["Name"]] = ClientStats(
                requests=int(row["Request Count"]),
                failures=int(row["Failure Count"]),
                per_second=_number(row["Requests/s"]),
                p50=_number(row["50%"]),
                p95=_number(row["95%"]),
                p99=_number(row["99%"]),
            )
    failures: Counter[str] = Counter()
    failures_csv = Path(f"{prefix}_failures.csv")
    if failures_csv.exists():
        with failures_csv.open(newline="") as handle:
            for row in csv.DictReader(handle):
                error = re.sub(r"^CatchResponseError\((['\"])(.*)\1\)$", r"\2", row["Error"])
                failures[f"{row['Name']}: {error}"] += int(row["Occurrences"])
    return stats, failures


@dataclass
class ServerStats:
    """The server's time per request (ms) and the status codes, from gunicorn's access log."""

    ms: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)


def server_stats(access_log: Path) -> dict[str, ServerStats]:
    stats = {name: ServerStats() for name in [*ENDPOINTS, "other"]}
    for line in access_log.read_text().splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        method, path, status, micros = parts
        name = next(
            (
                name
                for name, (verb, pattern) in ENDPOINTS.items()
                if method == verb and pattern.fullmatch(path)
            ),
            "other",
        )
        stats[name].ms.append(int(micros) / 1000)
        stats[name].statuses[status] += 1
    return stats


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Integrity:
    acknowledged: int  # distinct assignments whose submit was answered 200
    ratings: int  # ratings stored in the study
    lost: int  # acknowledged, but a question's rating is missing or holds another value
    unacknowledged: int  # answered items whose submit the client never saw acknowledged (in flight at stop)
    duplicates: int
    over_k: int
    counter_mismatches: int

    def problems(self) -> list[str]:
        found = [
            f"{count} {what}"
            for count, what in [
                (self.lost, "lost"),
                (self.duplicates, "duplicated"),
                (self.over_k, "over k"),
                (self.counter_mismatches, "taken-counter mismatches"),
            ]
            if count
        ]
        if not self.acknowledged:
            found.append("no submit was acknowledged: nothing to check")
        return found

    def line(self) -> str:
        verdict = "OK" if not self.problems() else "FAILED (" + ", ".join(self.problems()) + ")"
        return (
            f"Integrity {verdict}: acknowledged submits {self.acknowledged}, ratings stored {self.ratings}; "
            f"lost {self.lost}, duplicates {self.duplicates}, items over k {self.over_k}, "
            f"taken-counter mismatches {self.counter_mismatches}; "
            f"answered but not acknowledged (in flight at stop) {self.unacknowledged}"
        )


def read_acknowledged(path: Path) -> dict[int, dict[str, int]]:
    """Assignment id -> the values of its last acknowledged submit."""
    acknowledged: dict[int, dict[str, int]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                acknowledged[int(record["assignment"])] = {
                    str(k): int(v) for k, v in record["values"].items()
                }
    return acknowledged


def integrity(study_id: int, acknowledged: dict[int, dict[str, int]]) -> Integrity:
    from django.db import connection
    from django.db.models import Count, F, Q

    from annotation.models import Assignment, Rating, Study, WorkItem

    connection.close()  # the server wrote; read afresh
    ratings = Rating.objects.filter(response__context__study_id=study_id)
    stored = {
        (annotator, response, question): value
        for annotator, response, question, value in ratings.values_list(
            "annotator_id", "response_id", "question__name", "value"
        )
    }
    assignments = {
        pk: (annotator, response, status)
        for pk, annotator, response, status in Assignment.objects.filter(item__study_id=study_id).values_list(
            "pk", "annotator_id", "item__response_id", "status"
        )
    }
    lost = 0
    for pk, values in acknowledged.items():
        found = assignments.get(pk)
        if found is None or any(
            stored.get((found[0], found[1], question)) != value for question, value in values.items()
        ):
            lost += 1
    unacknowledged = sum(
        1 for pk, (_, _, status) in assignments.items() if status == "done" and pk not in acknowledged
    )
    duplicates = (
        ratings.order_by()
        .values("annotator_id", "response_id", "question_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    items = WorkItem.objects.filter(study_id=study_id).annotate(
        live=Count("assignments", filter=Q(assignments__status__in=["active", "done"]))
    )
    k = Study.objects.get(pk=study_id).ratings_per_item
    over_k = (
        ratings.order_by()
        .values("response_id")
        .annotate(n=Count("annotator_id", distinct=True))
        .filter(n__gt=k)
        .count()
    )
    return Integrity(
        acknowledged=len(acknowledged),
        ratings=ratings.count(),
        lost=lost,
        unacknowledged=unacknowledged,
        duplicates=duplicates,
        over_k=over_k + items.filter(done__gt=F("wanted")).count(),
        counter_mismatches=items.exclude(taken=F("live")).count(),
    )


def database_description() -> str:
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            return f"PostgreSQL {cursor.fetchone()[0]} (throwaway cluster, fsync on)"
    import sqlite3

    return f"SQLite {sqlite3.sqlite_version} (fresh file)"


def machine_description() -> str:
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{platform.platform()}, {model}, {os.cpu_count()} cores ({usable} usable by this process)"


def _ms(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:,.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--annotators", type=int, default=50, help="locust users, one API token each")
    parser.add_argument("--seconds", type=int, default=60, help="locust's --run-time")
    parser.add_argument(
        "--think", type=float, default=0.5, help="mean seconds between getting an item and rating it"
    )
    parser.add_argument(
        "--spawn-rate",
        type=float,
        default=None,
        help="locust users started per second (default: all within a second; each then waits a random "
        "part of the first think time)",
    )
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument("--contexts", type=int, default=3000, help="contexts (x 2 replies) in the study")
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()
    spawn_rate = args.spawn_rate or float(args.annotators)

    run_dir = Path(tempfile.mkdtemp(prefix="dialeval-load-run-"))
    acknowledged_path = run_dir / "acknowledged.jsonl"
    access_log = run_dir / "gunicorn-access.log"
    prefix = run_dir / "locust"
    started_at = datetime.now(UTC)
    with database(args.database) as database_url:
        print(f"[load] preparing a study on {args.database} ...", flush=True)
        study_id, tokens = prepare(database_url, annotators=args.annotators, contexts=args.contexts, k=args.k)
        database_name = database_description()
        config = run_dir / "run.json"
        config.write_text(
            json.dumps(
                {
                    "study": study_id,
                    "tokens": tokens,
                    "think": args.think,
                    "acknowledged": str(acknowledged_path),
                }
            )
        )
        port = free_port()
        command = locust_command(
            port=port,
            users=args.annotators,
            spawn_rate=spawn_rate,
            seconds=args.seconds,
            think=args.think,
            prefix=prefix,
        )
        speed_before = time_workload()
        with gunicorn(database_url, port, args.workers, run_dir / "gunicorn.log", access_log):
            print(f"[load] locust: {args.annotators} users for {args.seconds} s ...", flush=True)
            ticks_before = read_cpu_ticks()
            wall = run_locust(command, config=config, log=run_dir / "locust.log")
            ticks_after = read_cpu_ticks()
        speed_after = time_workload()
        shares: CpuShares | None = None
        if ticks_before is not None and ticks_after is not None:
            shares = cpu_shares(ticks_before, ticks_after)
        checked = integrity(study_id, read_acknowledged(acknowledged_path))

    client, failures = client_stats(prefix)
    server = server_stats(access_log)
    target = 100 if args.database == "sqlite" else 50
    print()
    print(
        f"Annotation load — {args.annotators} annotators, {args.seconds} s, think {args.think:g} s, "
        f"spawn rate {spawn_rate:g}/s, {args.database}, gunicorn {args.workers} sync workers"
    )
    print()
    print(
        "| endpoint | requests | req/s | failures | server p50 ms | server p95 ms | server p99 ms "
        "| client p50 ms | client p95 ms | client p99 ms | target server p95 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    all_ms = [value for name in ENDPOINTS for value in server[name].ms]
    for name, server_ms, goal in [
        *((name, server[name].ms, f"< {target} ms") for name in ENDPOINTS),
        ("all", all_ms, ""),
    ]:
        row = client.get("Aggregated" if name == "all" else name, ClientStats(0, 0, 0.0, *[float("nan")] * 3))
        print(
            f"| {name} | {row.requests:,} | {row.per_second:.1f} | {row.failures:,} | "
            f"{_ms(percentile(server_ms, 50))} | {_ms(percentile(server_ms, 95))} | "
            f"{_ms(percentile(server_ms, 99))} | {_ms(row.p50)} | {_ms(row.p95)} | {_ms(row.p99)} | {goal} |"
        )
    print()
    logged = "; ".join(
        f"{name} {len(stats.ms):,} ({', '.join(f'{code}: {n:,}' for code, n in sorted(stats.statuses.items()))})"
        for name, stats in server.items()
        if stats.ms
    )
    errors = sum(n for stats in server.values() for code, n in stats.statuses.items() if int(code) >= 400)
    print(f"Server log: {logged or 'no requests'}; error responses {errors:,}")
    print(f"Client failures: {', '.join(f'{what} x{n:,}' for what, n in failures.most_common()) or 'none'}")
    print(checked.line())
    print()
    print(f"Machine: {machine_description()}")
    print(f"Date: {started_at:%Y-%m-%d %H:%M} UTC; locust ran {wall:.0f} s (run time + start + stop)")
    print(
        f"Machine speed (bench/machine_speed.py): fixed Python workload {speed_before.text()} before the run, "
        f"{speed_after.text()} after; while locust ran: {shares.text() if shares else 'no /proc/stat'}"
    )
    print(f"Database: {database_name}")
    print(
        f"Server: gunicorn {version('gunicorn')}, {args.workers} sync workers, --preload, production settings; "
        f"client: locust {version('locust')}, one process"
    )
    print(f"Command: {shlex.join(sys.orig_argv)}")
    print(f"Locust: {shlex.join(command)}")
    print(f"Run files: {run_dir}")
    if checked.problems():
        print(f"annotation load: integrity check failed: {', '.join(checked.problems())}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
