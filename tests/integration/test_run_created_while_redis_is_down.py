"""A scoring run created through the API while Redis is down: the 202 itself carries the "not
queued yet" note, not only the next GET; once Redis is back the recovery sends the run and the note goes.
A real redis-server, stopped with SIGTERM as a restart would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import redis
from rest_framework.test import APIClient

from scoring.models import RunStatus, ScoringRun
from scoring.services.recovery import scoring_runs_recover
from scoring.services.runs import BROKER_DOWN_NOTE
from tests.integration.test_scoring_faults import build_study
from tests.live_services import RedisProcess, celery_broker

pytestmark = pytest.mark.integration


@pytest.mark.django_db(transaction=True)  # the run is sent after its transaction commits
def test_the_202_of_a_run_created_while_redis_is_down_says_it_is_not_queued(
    tmp_path: Path, settings: Any
) -> None:
    server = RedisProcess(tmp_path)
    server.start()
    settings.CELERY_BROKER_URL = settings.REDIS_URL = server.url
    study = build_study(contexts=3, systems=2)
    client = APIClient()
    client.force_authenticate(study.owner)
    url = f"/api/studies/{study.pk}/scoring-runs/"
    try:
        with celery_broker(server.url):
            server.stop()
            created = client.post(url, {"metrics": ["bleu-2"], "references": "single"}, format="json")
            assert created.status_code == 202, created.content
            body = created.json()
            assert (body["status"], body["notes"]) == (RunStatus.PENDING, BROKER_DOWN_NOTE)
            assert client.get(f"/api/scoring-runs/{body['id']}/").json()["notes"] == BROKER_DOWN_NOTE

            server.start()
            scoring_runs_recover(pending_grace_seconds=0)
            run = ScoringRun.objects.get(pk=body["id"])
            assert run.notes == ""
            assert run.enqueued_at is not None
            assert redis.Redis.from_url(server.url).llen("cpu") == 1  # the message waits for a worker
    finally:
        server.stop()
