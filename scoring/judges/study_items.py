"""A study's replies as a judge reads them (context turns, reply, references of the run's mode), read the
way a scoring chunk reads them (:func:`scoring.services.chunk_reads.reply_items`), so a preview shows the
prompt a run's judge will read. Replies are numbered from 1 in the order of their ids, the item browser's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from annotation.models import Response, Study
from scoring.metrics.llm_judge.prompts import JudgeItem
from scoring.services.chunk_reads import reply_items
from scoring.services.references_policy import references_for_mode


class ReplyPositionError(ValueError):
    """A reply number the study does not have; the message starts with the field, ``position``."""


@dataclass(frozen=True)
class StudyReply:
    """The reply at ``position`` (1: the first) of the study's ``count``, as a judge reads it."""

    response_id: int
    position: int
    count: int
    item: JudgeItem


def study_reply_ids(*, study: Study) -> list[int]:
    """The ids of the study's replies, in order (position 1 is the first)."""
    return list(Response.objects.filter(context__study=study).order_by("id").values_list("id", flat=True))


def judge_items(*, response_ids: Sequence[int], references: str) -> list[JudgeItem]:
    """The replies ``response_ids`` (those that exist, in that order) as a judge reads them, with the
    references of the mode ``references``."""
    return [
        JudgeItem(
            context=item.context,
            reply=item.text,
            references=tuple(references_for_mode(item.references, references)),
        )
        for item in reply_items(response_ids)
    ]


def study_reply_at(*, study: Study, position: int, references: str) -> StudyReply:
    """The study's reply number ``position``; a :class:`ReplyPositionError` when there is none."""
    ids = study_reply_ids(study=study)
    if not ids:
        raise ReplyPositionError("position: the study has no replies yet; import some first")
    if not 1 <= position <= len(ids):
        raise ReplyPositionError(f"position: the study has {len(ids)} replies; choose 1 to {len(ids)}")
    response_id = ids[position - 1]
    (item,) = judge_items(response_ids=[response_id], references=references)
    return StudyReply(response_id=response_id, position=position, count=len(ids), item=item)


def sample_ids(ids: Sequence[int], size: int) -> list[int]:
    """At most ``size`` of ``ids``, spread evenly from the first to the last."""
    if len(ids) <= size:
        return list(ids)
    step = (len(ids) - 1) / (size - 1) if size > 1 else 0
    return list(dict.fromkeys(ids[round(index * step)] for index in range(size)))
