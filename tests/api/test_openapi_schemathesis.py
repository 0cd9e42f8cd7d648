"""The OpenAPI schema describes the API: schemathesis (property-based, every check on) against a
live test server, in three processes at once over three slices of the operations (35-51 s on
two cores).

The server is pytest-django's live server on the test database: SQLite, and PostgreSQL in the pass of
scripts/test_postgres.sh, where the fuzzed text reaches a database that refuses what SQLite stores (a NUL
character in a path or query was a 500 only there). The data: a
study with replies, a system, an import and a scoring run, owned by a researcher who has also joined it
as an annotator, so that one token reaches every endpoint; their ids are offered to schemathesis as a
dictionary beside the random ones it generates, so requests get past the 404 of a random id. Its settings
(tests/api/schemathesis.toml) say which operations check their input beyond the schema. The broker is an
address where nothing listens: a run or a training the fuzzer starts waits, as it would while Redis is
down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from annotation.importers import ImportFile
from annotation.services.annotators import annotator_join
from annotation.services.imports import study_import
from annotation.services.joining import annotator_consent
from scoring.services.runs import scoring_run_create
from tests.annotation.work_builders import work_study
from tests.live_services import celery_broker, free_port

# serial: scripts/test.sh runs it after the parallel pass, alone (schemathesis's three processes and the live
# server keep both cores busy; beside another test process a request was once dropped under the load).
pytestmark = [pytest.mark.integration, pytest.mark.serial]

CONFIG = Path(__file__).with_name("schemathesis.toml")
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
MAX_EXAMPLES = int(os.environ.get("DIALEVAL_SCHEMATHESIS_EXAMPLES", "15"))
TIME_LIMIT = 300  # seconds for the three processes; they take 35-51 s on two cores
SEED = 24


def _data() -> tuple[str, dict[str, list[int]]]:
    """The researcher's token and the ids of what they own, by path parameter name."""
    study = work_study(contexts=3, systems=2)
    owner = study.owner
    annotator_consent(annotator=annotator_join(token=study.invite_token, user=owner))
    line = {"context": ["and you ?"], "response": "me too .", "system": "bot-0", "ratings": {}}
    record = study_import(
        study=study, format="jsonl", files=[ImportFile("more.jsonl", json.dumps(line).encode())], user=owner
    )
    run = scoring_run_create(study=study, metrics=["bleu-2"], user=owner, enqueue=False)
    token = Token.objects.create(user=owner).key
    ids = {
        "study_id": [study.pk],
        "system_id": list(study.systems.values_list("pk", flat=True)),
        "import_id": [record.pk],
        "run_id": [run.pk],
    }
    return token, ids


def _config(path: Path, ids: dict[str, list[int]]) -> Path:
    lines = [CONFIG.read_text(), ""]
    for name, values in ids.items():
        lines += [f"[dictionaries.{name}]", f"values = {values}", ""]
    lines.append("[parameters]")
    lines += [f'{name} = {{ dictionary = "{name}", probability = 0.5 }}' for name in ids]
    path.write_text("\n".join(lines) + "\n")
    return path


# The operations in three slices, each fuzzed by its own schemathesis process with one worker, the three at
# once: schemathesis's worker threads share one interpreter (and one core), and on Python 3.11.7 two of its
# threads parsing source at once (hypothesis describes its lambdas with ``ast``) can fail with "AST
# constructor recursion depth mismatch" (CPython gh-106905). Each slice is about a third of the time.
SLICES = (
    ("--include-path-regex", r"^/api/studies/\{study_id\}/"),
    ("--include-path-regex", r"^/api/(work|score)/"),
    ("--exclude-path-regex", r"^/api/(studies/\{study_id\}|work|score)/"),
)


def _command(config: Path, url: str, token: str, selection: tuple[str, str], report: Path) -> list[str]:
    return [
        str(SCHEMATHESIS), "--config-file", str(config),
        "run", f"{url}/api/schema/",
        *selection,
        "--checks", "all",
        "--header", f"Authorization: Token {token}",
        "--phases", "examples,coverage,fuzzing",
        "--max-examples", str(MAX_EXAMPLES),
        "--workers", "1",
        "--seed", str(SEED),
        "--generation-database", "none",
        "--request-timeout", "30",
        # Django's test server keeps a connection alive after answering a request whose body it did not read
        # (a 429 from a throttle, say), then reads that body as the next request: schemathesis's next request
        # on the connection gets an HTML error page where a status line belongs ("Connection aborted").
        # gunicorn drains the body; here a request is sent again, on a new connection, after such a drop.
        "--request-retries", "2",
        "--no-color",
        "--report", "junit", "--report-dir", str(report),
    ]  # fmt: skip


def _failures(output: str) -> str:
    """The report from its first section of errors (a request the server dropped) or failures on."""
    sections = [output.find(title) for title in ("= ERRORS =", "= FAILURES =") if title in output]
    return output[min(sections) :] if sections else output


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_as_its_openapi_schema_says(live_server: Any, tmp_path: Path) -> None:
    token, ids = _data()
    config = _config(tmp_path / "schemathesis.toml", ids)
    started = time.monotonic()
    with celery_broker(f"redis://127.0.0.1:{free_port()}/0"):
        processes = [
            subprocess.Popen(
                _command(config, live_server.url, token, selection, tmp_path / f"report-{number}"),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=tmp_path,
            )
            for number, selection in enumerate(SLICES)
        ]
        deadline = time.monotonic() + TIME_LIMIT
        try:
            outputs = [
                process.communicate(timeout=max(1.0, deadline - time.monotonic()))[0] for process in processes
            ]
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
                    process.wait()
    for selection, process, output in zip(SLICES, processes, outputs, strict=True):
        summary = [line for line in output.splitlines() if "generated" in line or line.startswith("=")]
        print(f"schemathesis {' '.join(selection)}: " + " | ".join(summary[-3:]))
        assert process.returncode == 0, f"{' '.join(selection)}\n{_failures(output)[:15000]}"
        assert "passed" in output
    print(f"schemathesis: {time.monotonic() - started:.0f} s")
