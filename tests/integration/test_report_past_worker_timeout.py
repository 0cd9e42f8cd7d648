"""A report that takes longer to build than gunicorn's worker timeout: the API and a download answer at once
(202, then 200 once the Celery worker has built it), never a killed web worker and an HTML 500.

Real parts throughout: gunicorn (one sync worker, ``--timeout 1``) and a Celery worker process on the test
database, a real Redis broker, a study of 3,000 rated replies scored by twelve metrics, whose report (bootstrap
intervals, Williams and bootstrap tests for every pair of metrics, permutation tests, clusters) takes
longer than that second to build on any machine this project runs on: the test measures it (the time from
the first 202 to the 200) and requires it.

Before the API served reports through the worker (correlation/report/served.py), ``GET
/api/studies/<id>/correlations/`` built the report inside the request: gunicorn killed the worker at its
timeout (``WORKER TIMEOUT`` in its log) and the client got an HTML 500 or a closed connection.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import pytest
import requests
from rest_framework.authtoken.models import Token

from annotation.models import Annotator, DialogContext, Rating, Response, Study, System
from scoring.models import MetricScore
from tests.correlation.builders import bump_data_version, signature
from tests.factories import QuestionFactory, StudyFactory
from tests.live_services import CeleryWorkerProcess, free_port, gunicorn_server, log_tail

pytestmark = pytest.mark.integration

WORKER_TIMEOUT_SECONDS = 1  # gunicorn's --timeout: a request longer than this has its worker killed
BUILD_DEADLINE = 240.0
REPLIES = 3000
METRICS = tuple(f"metric-{index}" for index in range(12))
SYSTEMS = ("hred", "seq2seq", "retrieval")


@pytest.fixture
def study(celery_worker_process: CeleryWorkerProcess) -> Study:
    """3,000 replies in 1,000 contexts, three ratings each, twelve metric values that follow the ratings
    loosely; written in bulk and committed, so the worker sees them."""
    study = StudyFactory.create(name="slow report")
    question = QuestionFactory.create(study=study, name="appropriateness")
    signatures = [signature(name) for name in METRICS]
    systems = [System.objects.create(study=study, name=name) for name in SYSTEMS]
    raters = [Annotator.objects.create(study=study, pseudonym=f"rater-{index}") for index in range(3)]
    contexts = DialogContext.objects.bulk_create(
        DialogContext(
            study=study, external_id=f"c{index}", turns=[{"speaker": "A", "text": f"context {index}"}]
        )
        for index in range(REPLIES // len(SYSTEMS))
    )
    responses = Response.objects.bulk_create(
        Response(context=context, system=system, text=f"{system.name} reply {index}")
        for index, context in enumerate(contexts)
        for system in systems
    )
    rng = random.Random(35)
    ratings, scores = [], []
    for response in responses:
        quality = rng.random()
        ratings += [
            Rating(annotator=rater, response=response, question=question,
                   value=min(2, max(0, round(2 * quality + rng.gauss(0, 0.6)))))
            for rater in raters
        ]  # fmt: skip
        scores += [
            MetricScore(
                response=response, signature=metric, value=quality * (0.2 + 0.05 * rank) + rng.gauss(0, 0.3)
            )
            for rank, metric in enumerate(signatures)
        ]
    Rating.objects.bulk_create(ratings, batch_size=2000)
    MetricScore.objects.bulk_create(scores, batch_size=2000)
    bump_data_version(study)
    return study


@pytest.fixture
def web(celery_worker_process: CeleryWorkerProcess, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """gunicorn on the test database and the worker's broker; yields its base URL and its log."""
    log = tmp_path / "web.log"
    port = free_port()
    arguments = ["--bind", f"127.0.0.1:{port}", "--workers", "1", "--timeout", str(WORKER_TIMEOUT_SECONDS)]
    with gunicorn_server(arguments, port=port, env=celery_worker_process.env, log=log) as base:
        yield base, log


def test_a_report_longer_than_the_web_workers_timeout_is_answered_202_then_served(
    study: Study, web: tuple[str, Path], celery_worker_process: CeleryWorkerProcess
) -> None:
    base, log = web
    token = Token.objects.create(user=study.owner)
    headers = {"Authorization": f"Token {token.key}"}
    # As a researcher asks for a final table: 10,000 bootstrap resamples, statistics within contexts too.
    url = f"{base}/api/studies/{study.pk}/correlations/?resamples=10000&grouping=context"

    asked = time.monotonic()
    first = requests.get(url, headers=headers, timeout=30)
    answered = time.monotonic() - asked

    assert first.status_code == 202, (first.status_code, first.text[:500], log_tail(log))
    assert answered < WORKER_TIMEOUT_SECONDS
    assert first.headers["Content-Type"].startswith("application/json")
    assert first.headers["Location"].endswith(
        f"/api/studies/{study.pk}/correlations/?resamples=10000&grouping=context"
    )
    assert int(first.headers["Retry-After"]) >= 1
    assert first.json()["stale_available"] is False
    # No older report to fall back on: stale=ok waits like the rest.
    assert requests.get(f"{url}&stale=ok", headers=headers, timeout=30).status_code == 202

    built = None
    while time.monotonic() - asked < BUILD_DEADLINE:
        poll = time.monotonic()
        answer = requests.get(urljoin(url, first.headers["Location"]), headers=headers, timeout=30)
        assert time.monotonic() - poll < WORKER_TIMEOUT_SECONDS, "a poll took as long as a build"
        if answer.status_code == 200:
            built = answer
            break
        assert answer.status_code == 202, (answer.status_code, answer.text[:500])
        time.sleep(0.5)
    took = time.monotonic() - asked

    assert built is not None, f"no report after {BUILD_DEADLINE:.0f} s\n{celery_worker_process.log()}"
    # The point of the test: building it takes longer than a request may.
    assert took > 2 * WORKER_TIMEOUT_SECONDS, f"the report took only {took:.1f} s: make the study larger"
    document = built.json()
    assert document["study"] == study.pk
    assert {row["metric"] for row in document["rows"]} >= set(METRICS)
    assert built.headers["X-Report-Data-Version"] == str(document["data_version"])
    assert "WORKER TIMEOUT" not in log.read_text(errors="replace"), log_tail(log)
    print(f"report built by the worker in {took:.1f} s; the first answer came in {answered * 1000:.0f} ms")
