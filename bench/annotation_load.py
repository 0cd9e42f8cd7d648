"""Annotation load benchmark (issue 4): simulated annotators against a real server on loopback.

Each simulated annotator is a thread with its own API token that, for ``--seconds``, asks for its next
item (``GET /api/work/<study>/next/?kind=rate``), thinks (uniformly 0.5-1.5 times ``--think`` seconds;
each annotator starts at a random moment within the first think time), and submits a rating
(``POST /api/work/<study>/assignments/<id>/rating/``). The server is gunicorn (the production shape in
docker-compose.yml) with ``--workers`` sync workers and production settings (DEBUG off), on a fresh
database: a SQLite file, or a throwaway PostgreSQL cluster (initdb on a free port, removed afterwards).

Reported: requests per second, p50/p95/p99 latency of "next item" and "submit", errors; then the
database is checked against what the clients were told: every acknowledged submit is a stored rating
(lost = acknowledged but missing), nothing is stored twice (duplicates per annotator, reply and question),
no item has more answers than k, and every item's ``taken`` counter equals its active plus done
assignments. Targets: p95 < 100 ms with SQLite, < 50 ms with PostgreSQL; zero duplicates or lost.

    .venv/bin/python -m bench.annotation_load [--database sqlite|postgres] [--annotators 50]
        [--seconds 60] [--think 0.5] [--workers 4] [--contexts 3000] [--k 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = Path(sys.executable)
GUNICORN = PYTHON.parent / "gunicorn"
SECRET = "bench-only-secret-key-not-for-production-0123456789"


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
        annotator_join(token=study.invite_token, user=user)
        tokens.append(Token.objects.create(user=user).key)
    return study.pk, tokens


@contextmanager
def gunicorn(database_url: str, port: int, workers: int, log: Path) -> Iterator[None]:
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


@dataclass
class ClientLog:
    next_ms: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    acknowledged: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


def annotator_loop(base: str, study_id: int, token: str, until: float, think: float, log: ClientLog) -> None:
    import requests

    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"
    rng = random.Random(token)
    # Independent people: each starts at a random moment and thinks for 0.5x-1.5x the mean think time,
    # so the 50 annotators do not hit the server in lock-step bursts.
    time.sleep(rng.uniform(0, think))
    while time.monotonic() < until:
        started = time.perf_counter()
        answer = session.get(f"{base}/api/work/{study_id}/next/", params={"kind": "rate"}, timeout=30)
        log.next_ms.append(1000 * (time.perf_counter() - started))
        if answer.status_code != 200:
            log.error(f"next {answer.status_code}")
            time.sleep(0.5)
            continue
        payload = answer.json()
        if payload.get("done") or "assignment" not in payload:
            log.error(f"no work ({payload.get('reason')})")
            time.sleep(0.5)
            continue
        if think:
            time.sleep(rng.uniform(0.5 * think, 1.5 * think))
        values = {
            question["name"]: rng.choice(question["points"])["value"] for question in payload["questions"]
        }
        started = time.perf_counter()
        posted = session.post(
            f"{base}/api/work/{study_id}/assignments/{payload['assignment']}/rating/",
            json={"values": values, "seconds": think},
            timeout=30,
        )
        log.submit_ms.append(1000 * (time.perf_counter() - started))
        if posted.status_code == 200:
            log.acknowledged += 1
        else:
            log.error(f"submit {posted.status_code}")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Integrity:
    ratings: int
    duplicates: int
    over_k: int
    counter_mismatches: int


def integrity(study_id: int) -> Integrity:
    from django.db import connection
    from django.db.models import Count, F, Q

    from annotation.models import Rating, Study, WorkItem

    connection.close()  # the server wrote; read afresh
    ratings = Rating.objects.filter(response__context__study_id=study_id)
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
        ratings=ratings.count(),
        duplicates=duplicates,
        over_k=over_k + items.filter(done__gt=F("wanted")).count(),
        counter_mismatches=items.exclude(taken=F("live")).count(),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--think", type=float, default=0.5, help="seconds between getting an item and rating it"
    )
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument("--contexts", type=int, default=3000, help="contexts (x 2 replies) in the study")
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()

    with database(args.database) as database_url:
        print(f"[load] preparing a study on {args.database} ...", flush=True)
        study_id, tokens = prepare(database_url, annotators=args.annotators, contexts=args.contexts, k=args.k)
        port = free_port()
        log_path = Path(tempfile.gettempdir()) / f"dialeval-load-gunicorn-{port}.log"
        with gunicorn(database_url, port, args.workers, log_path):
            base = f"http://127.0.0.1:{port}"
            logs = [ClientLog() for _ in tokens]
            until = time.monotonic() + args.seconds
            threads = [
                threading.Thread(target=annotator_loop, args=(base, study_id, token, until, args.think, log))
                for token, log in zip(tokens, logs, strict=True)
            ]
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.monotonic() - started
        checked = integrity(study_id)

    next_ms = [value for log in logs for value in log.next_ms]
    submit_ms = [value for log in logs for value in log.submit_ms]
    acknowledged = sum(log.acknowledged for log in logs)
    errors: dict[str, int] = {}
    for log in logs:
        for key, count in log.errors.items():
            errors[key] = errors.get(key, 0) + count
    target = 100 if args.database == "sqlite" else 50
    print()
    print(
        f"Annotation load — {args.annotators} annotators, {args.seconds:.0f} s, think {args.think} s, "
        f"gunicorn {args.workers} sync workers, {args.database}; "
        f"{platform.machine()} {os.cpu_count()} cores, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )
    print("| endpoint | requests | req/s | p50 ms | p95 ms | p99 ms | mean ms | target p95 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, values in (("next item", next_ms), ("submit", submit_ms)):
        print(
            f"| {name} | {len(values)} | {len(values) / elapsed:.1f} | {percentile(values, 50):.1f} | "
            f"{percentile(values, 95):.1f} | {percentile(values, 99):.1f} | "
            f"{statistics.fmean(values) if values else float('nan'):.1f} | < {target} |"
        )
    print(
        f"| all | {len(next_ms) + len(submit_ms)} | {(len(next_ms) + len(submit_ms)) / elapsed:.1f} | | | | | |"
    )
    print()
    lost = max(0, acknowledged - checked.ratings)
    print(
        f"acknowledged submits {acknowledged}, ratings stored {checked.ratings}: lost {lost}, "
        f"unacknowledged but stored {max(0, checked.ratings - acknowledged)}, duplicates {checked.duplicates}, "
        f"items over k {checked.over_k}, taken-counter mismatches {checked.counter_mismatches}"
    )
    print(f"client-side errors: {errors or 'none'}")


if __name__ == "__main__":
    main()
