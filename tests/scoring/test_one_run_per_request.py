"""Two identical starts at once (double click, two tabs, two CLI calls) are one run, on SQLite and
PostgreSQL: the partial unique constraint on ``request_key`` decides, not a check-then-insert."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from scoring.models import RunStatus, ScoringRun
from scoring.services import scoring_run_cancel, scoring_run_create
from tests.factories import DialogContextFactory, ReferenceFactory, ResponseFactory, StudyFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_identical_starts_at_the_same_moment_make_one_run() -> None:
    study = StudyFactory.create()
    context = DialogContextFactory.create(study=study)
    ReferenceFactory.create(context=context, text="fine , thanks .", origin="original")
    ResponseFactory.create(context=context, text="fine .")
    starters = 4
    barrier = threading.Barrier(starters)
    results: list[tuple[int, bool]] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            barrier.wait(timeout=10)
            run = scoring_run_create(study=study, metrics=["bleu-1", "bleu-2"], enqueue=False)
            results.append((run.pk, run.was_existing))
        except BaseException as error:  # reported below, with the thread's own traceback lost otherwise
            errors.append(error)
        finally:
            connection.close()  # each thread has its own connection; close it before the test database goes

    threads = [threading.Thread(target=start) for _ in range(starters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert errors == []
    assert len(results) == starters
    assert len({run_id for run_id, _ in results}) == 1  # every caller got the same run
    assert sorted(existing for _, existing in results) == [False] + [True] * (starters - 1)
    run = ScoringRun.objects.get()
    assert run.status == RunStatus.PENDING
    assert scoring_run_cancel(run=run)  # once it has ended, the same request makes a new run
    again = scoring_run_create(study=study, metrics=["bleu-2", "bleu-1"], enqueue=False)
    assert again.pk != run.pk
    assert not again.was_existing
