"""Locust users for the annotation load benchmark (bench/annotation_load.py).

One :class:`Annotator` per simulated person, each with its own API token. The run is described by a JSON
file whose path is in the environment variable ``DIALEVAL_LOAD_CONFIG``::

    {"study": 1, "tokens": ["...", ...], "think": 0.5, "acknowledged": "/tmp/.../acknowledged.jsonl"}

Each user starts at a random moment within the first think time, then loops: ``GET
/api/work/<study>/next/?kind=rate`` (request name "next item"), thinks 0.5-1.5 x ``think`` seconds, and
``POST /api/work/<study>/assignments/<id>/rating/`` with ``{"values": {...}, "seconds": s}`` (name
"submit"). Every submit the server acknowledged (200) is appended to the ``acknowledged`` file as one JSON
line ``{"assignment": id, "values": {...}}``, written before the user can be stopped, so the benchmark can
compare what the clients were told with what the database holds.

Run by bench/annotation_load.py; by hand (server and study prepared elsewhere)::

    DIALEVAL_LOAD_CONFIG=run.json locust -f bench/annotation_locustfile.py --headless -u 50 -r 50 \
        --run-time 60s --host http://127.0.0.1:8000
"""

from __future__ import annotations

import itertools
import json
import os
import random
from functools import cache
from pathlib import Path
from typing import IO, Any

import gevent
from locust import HttpUser, constant, events, task
from locust.env import Environment
from locust.exception import StopUser
from locust.stats import CSV_STATS_INTERVAL_SEC

CONFIG_VARIABLE = "DIALEVAL_LOAD_CONFIG"
REQUEST_TIMEOUT = 30.0  # seconds; a request slower than this counts as a failure
NO_WORK_PAUSE = 0.5  # seconds to wait after "next item" gave nothing to rate

_user_numbers = itertools.count()


@cache
def run_config() -> dict[str, Any]:
    path = os.environ.get(CONFIG_VARIABLE)
    if not path:
        raise RuntimeError(f"{CONFIG_VARIABLE} must name the run's JSON file (see bench/annotation_load.py)")
    config: dict[str, Any] = json.loads(Path(path).read_text())
    return config


@cache
def acknowledged_file() -> IO[str]:
    # Line-buffered: each acknowledgement is on disk as soon as it is written.
    return Path(run_config()["acknowledged"]).open("a", buffering=1, encoding="utf-8")


def choose_values(questions: list[dict[str, Any]], rng: random.Random) -> dict[str, int]:
    """A random answer to every question: one of an ordinal question's points, any value of a slider."""
    values = {}
    for question in questions:
        points = question.get("points") or []
        if points:
            values[question["name"]] = int(rng.choice(points)["value"])
        else:
            values[question["name"]] = rng.randint(int(question["scale_min"]), int(question["scale_max"]))
    return values


@events.test_stop.add_listener
def _let_the_csv_catch_up(environment: Environment, **_kwargs: Any) -> None:
    """Give locust's CSV writer one more tick once every user has stopped.

    The writer rewrites ``<prefix>_stats.csv`` every ``CSV_STATS_INTERVAL_SEC`` and is not asked for a last
    write at exit, so without this pause the requests of the last second and of the stop timeout (users
    finishing their item) would be missing from the CSV the benchmark reads.
    """
    options = environment.parsed_options
    if options is not None and getattr(options, "csv_prefix", None):
        gevent.sleep(CSV_STATS_INTERVAL_SEC + 0.5)


class Annotator(HttpUser):
    """One annotator: next item, think, submit, again (the think time is inside the task)."""

    wait_time = constant(0)

    def on_start(self) -> None:
        config = run_config()
        self.number = next(_user_numbers)
        tokens: list[str] = config["tokens"]
        if self.number >= len(tokens):
            raise StopUser()  # more users than tokens: the extra ones do nothing
        token = tokens[self.number]
        self.client.headers["Authorization"] = f"Token {token}"
        self.study = int(config["study"])
        self.think = float(config["think"])
        self.rng = random.Random(token)
        # Independent people: each starts at a random moment within the first think time, so the
        # annotators do not hit the server in lock-step.
        if self.think:
            gevent.sleep(self.rng.uniform(0, self.think))

    @task
    def rate_one(self) -> None:
        payload: dict[str, Any] | None = None
        with self.client.get(
            f"/api/work/{self.study}/next/",
            params={"kind": "rate"},
            name="next item",
            timeout=REQUEST_TIMEOUT,
            catch_response=True,
        ) as answer:
            if answer.status_code != 200:
                answer.failure(f"HTTP {answer.status_code}")
            else:
                payload = answer.json()
                if payload is None or payload.get("done") or "assignment" not in payload:
                    answer.failure(f"no work ({(payload or {}).get('reason')})")
                    payload = None
                else:
                    answer.success()
        if payload is None:
            gevent.sleep(NO_WORK_PAUSE)
            return
        thought = self.rng.uniform(0.5 * self.think, 1.5 * self.think) if self.think else 0.0
        gevent.sleep(thought)
        assignment = int(payload["assignment"])
        values = choose_values(payload["questions"], self.rng)
        with self.client.post(
            f"/api/work/{self.study}/assignments/{assignment}/rating/",
            json={"values": values, "seconds": round(thought, 3)},
            name="submit",
            timeout=REQUEST_TIMEOUT,
            catch_response=True,
        ) as posted:
            if posted.status_code == 200:
                posted.success()
                # No gevent switch between the response and this write: a stopped user cannot lose it.
                acknowledged_file().write(json.dumps({"assignment": assignment, "values": values}) + "\n")
            else:
                posted.failure(f"HTTP {posted.status_code}")
