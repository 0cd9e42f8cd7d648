"""A judge's reading of one reply before a run starts: asked from the run form (or the API), computed by a
worker, polled by the page.

Why a worker: a local model's first load takes seconds to minutes (SmolLM2-135M about 15 s on a CPU), and an
endpoint may take its time-out times its attempts; a web request waits for neither. The request stores a
:class:`~scoring.models.JudgePreview` (the judge's definition and the reply as the judge reads it) and sends
the task ``scoring.judge_preview``; the page asks for the row every second
(``GET /api/judge-previews/<id>/``). The worker claims the row through its lease (:mod:`kernel.lease`), as
every background work is claimed, so a second delivery computes nothing twice and an attempt that lost its
claim writes nothing; a preview whose worker went silent, or that failed, is sent again when it is asked
for again (no periodic recovery: nobody but the page that asks waits for it).

The reading is the one a run computes for that reply: the same backend, batch-free (one item), the same
prefix cache setting, and, for a local model, the text it read (its chat template over the messages). An
endpoint's answer goes to the answer cache like a run's (paid by no run: a run that asks the same prompt
later gets it free). Asked again, a finished preview is returned as it is; a researcher's previews older than
a day are deleted when they ask for a new one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from kernel.lease import LeaseLost, LeaseTerms, lease_ask_again, lease_claim
from scoring.judges.backends import endpoint_settings, judge_backend, local_models
from scoring.judges.prompt_preview import PromptPreview, judge_prompt
from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, JudgeDefinition
from scoring.metrics.llm_judge.judging import JudgeSetup, local_readings, score_of, server_readings
from scoring.metrics.llm_judge.local_model import local_judge_model
from scoring.metrics.llm_judge.prompts import JudgeItem
from scoring.metrics.llm_judge.specs import LocalBackend, ServerBackend
from scoring.models import JudgePreview, PreviewStatus
from scoring.services.queueing import GPU_QUEUE, gpu_worker_available, task_send

logger = logging.getLogger(__name__)
PREVIEW_TASK = "scoring.judge_preview"  # scoring/tasks.py, sent by name
KEPT_FOR = timedelta(days=1)
PREVIEW_LEASE = LeaseTerms(
    model=JudgePreview,
    running=PreviewStatus.RUNNING,
    waiting=PreviewStatus.PENDING,
    stale_seconds=lambda: float(settings.DIALEVAL_JUDGE_PREVIEW_STALE_SECONDS),
)
BROKER_DOWN = "no worker could be reached (is Redis running?); ask again"


def preview_key(definition: JudgeDefinition, item: JudgeItem) -> str:
    """What makes two previews the same reading: the judge, the reply as it reads it, and the model's
    file (its path, size and modification time) or the endpoint's settings (never its key)."""
    if definition.backend == BACKEND_LOCAL:
        path = local_models().get(definition.model)
        stat = path.stat() if path is not None and path.exists() else None
        source: object = [str(path), stat.st_size, stat.st_mtime_ns] if stat is not None else str(path)
    else:
        setting = endpoint_settings().get(definition.model)
        source = setting.options if setting is not None else None
    payload = {"judge": definition.as_json(), "item": item_json(item), "source": source}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_json(item: JudgeItem) -> dict[str, Any]:
    return {"context": list(item.context), "reply": item.reply, "references": list(item.references)}


def judge_preview_request(*, user: User, preview: PromptPreview) -> JudgePreview:
    """The preview reading of ``preview``'s judge and reply, queued for a worker unless it is done or
    being computed (module docstring)."""
    key = preview_key(preview.definition, preview.reply.item)
    JudgePreview.objects.filter(requested_by=user, created_at__lt=timezone.now() - KEPT_FOR).delete()
    try:
        with transaction.atomic():
            row, created = JudgePreview.objects.get_or_create(
                requested_by=user,
                key=key,
                defaults={
                    "study": preview.study,
                    "response_id": preview.reply.response_id,
                    "position": preview.reply.position,
                    "definition": preview.definition.as_json(),
                    "item": item_json(preview.reply.item),
                    "heartbeat_at": timezone.now(),
                },
            )
    except IntegrityError:  # the same ask at the same time: the other one made it
        row, created = JudgePreview.objects.get(requested_by=user, key=key), False
    # A failed one, or one whose worker went silent (a lost message, a killed worker), is sent again.
    again = lease_ask_again(PREVIEW_LEASE, row.pk, failed=PreviewStatus.FAILED, error="")
    if created or again:
        local = preview.definition.backend == BACKEND_LOCAL
        transaction.on_commit(lambda: _send(row.pk, local=local))
    row.refresh_from_db()
    return row


def _send(preview_id: int, *, local: bool) -> None:
    """Send the task (a local model to the "gpu" queue while a GPU worker is live); a broker that is down
    fails the preview at once, saying so."""
    queue = GPU_QUEUE if local and gpu_worker_available() else None
    if not task_send(PREVIEW_TASK, args=[preview_id], queue=queue):
        JudgePreview.objects.filter(pk=preview_id, status=PreviewStatus.PENDING).update(
            status=PreviewStatus.FAILED, error=BROKER_DOWN, finished_at=timezone.now()
        )


def judge_preview_of(*, user: User, preview_id: int) -> JudgePreview:
    """The preview ``preview_id`` if ``user`` asked for it; ``JudgePreview.DoesNotExist`` otherwise."""
    return JudgePreview.objects.get(pk=preview_id, requested_by=user)


def judge_preview_compute(*, preview_id: int) -> None:
    """The task's body: claim the preview, read the reply, store the reading (or why it failed); nothing
    when another worker holds it or it is done, nothing written once this attempt lost it."""
    lease = lease_claim(PREVIEW_LEASE, preview_id)
    if lease is None:
        return
    row = JudgePreview.objects.get(pk=preview_id)
    definition = JudgeDefinition.from_json(row.definition)
    item = JudgeItem(
        context=tuple(row.item.get("context", [])),
        reply=str(row.item.get("reply", "")),
        references=tuple(row.item.get("references", [])),
    )
    started = time.perf_counter()
    try:
        result = preview_reading(definition, item, beat=lease.beat)
    except LeaseLost:
        logger.warning("judge preview %s: attempt %s lost its claim; stopped", preview_id, lease.attempt)
        return
    except Exception as error:  # the researcher reads why on the page
        logger.exception("judge preview %s failed", preview_id)
        lease.finish(
            PreviewStatus.FAILED, error=f"{type(error).__name__}: {error}"[:2000], finished_at=timezone.now()
        )
        return
    result["seconds"] = round(time.perf_counter() - started, 3)
    if not lease.finish(PreviewStatus.DONE, result=result, finished_at=timezone.now()):
        logger.warning("judge preview %s: attempt %s lost its claim; not stored", preview_id, lease.attempt)


def preview_reading(
    definition: JudgeDefinition, item: JudgeItem, *, beat: Callable[[], None]
) -> dict[str, Any]:
    """The judge's reading of ``item`` as a run computes it, with the text the model read where the
    prompt preview could not show it, and what an endpoint's request cost; ``beat`` writes the heartbeat
    (once the model is loaded, and once the reading is done)."""
    backend = judge_backend(definition)
    setup = JudgeSetup(definition.template, definition.question)
    prompt = judge_prompt(definition, item)
    text, note, usage = prompt.formatted, prompt.formatted_note, None
    if isinstance(backend, LocalBackend):
        model = local_judge_model(backend.path, device=backend.device, converted_dir=backend.converted_dir)
        beat()
        text = model.formatted(prompt.system, prompt.user, prompt.answer_prefix)
        note = "the model's chat template over the messages, then the answer prefix"
        (reading,) = local_readings(
            model,
            setup,
            [item],
            batch_size=1,
            prefix_cache=backend.prefix_cache,
            progress=lambda done: beat(),
        )
    elif isinstance(backend, ServerBackend):
        (reading,) = server_readings(backend.judge, setup, [item], progress=lambda done: beat())
        usage = asdict(backend.judge.usage)
    else:  # pragma: no cover - judge_backend gives one of the two
        raise TypeError(f"unknown judge backend {type(backend).__name__}")
    return {
        "labels": list(setup.labels),
        "points": list(setup.values),
        "probabilities": list(reading.probabilities),
        "expected": reading.expected,
        "likeliest": reading.likeliest,
        "mass": reading.mass,
        "read": definition.read,
        "score": score_of(reading, definition.read),
        "formatted": text,
        "formatted_note": note,
        "usage": usage,
    }
