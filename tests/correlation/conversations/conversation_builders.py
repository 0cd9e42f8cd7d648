"""Conversations as the conversations-jsonl import leaves them, built with the factories: contexts
``"<conversation>#<turn>"`` holding the earlier turns, one reply per bot turn, and metric scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from annotation.models import DialogContext, Response, Study, System
from scoring.models import MetricScore, MetricSignature
from tests.factories import DialogContextFactory, ResponseFactory


def add_conversation(
    *,
    study: Study,
    conversation: str,
    system: str,
    turns: Sequence[tuple[str, str]],
    scores: Mapping[MetricSignature, Sequence[float | None]] | None = None,
    bot: str = "bot",
    order: Sequence[int] | None = None,
) -> list[Response]:
    """The replies of ``system`` to every ``bot`` turn after the first of ``turns`` ((speaker, text)
    pairs); ``scores`` gives each signature's value per reply, in turn order (None: not scored);
    ``order`` creates the replies in another order (positions into the replies)."""
    system_row, _ = System.objects.get_or_create(study=study, name=system)
    reply_turns = [index for index, (speaker, _) in enumerate(turns) if index > 0 and speaker == bot]
    created: dict[int, Response] = {}
    for position in order if order is not None else range(len(reply_turns)):
        index = reply_turns[position]
        external_id = f"{conversation}#{index}"
        context = DialogContext.objects.filter(study=study, external_id=external_id).first()
        if context is None:
            context = DialogContextFactory.create(
                study=study,
                external_id=external_id,
                turns=[{"speaker": speaker, "text": text} for speaker, text in turns[:index]],
                position=DialogContext.objects.filter(study=study).count(),
            )
        created[index] = ResponseFactory.create(context=context, system=system_row, text=turns[index][1])
    replies = [created[index] for index in reply_turns]
    for signature, values in (scores or {}).items():
        for reply, value in zip(replies, values, strict=True):
            if value is not None:
                MetricScore.objects.create(response=reply, signature=signature, value=value)
    return replies


def chat(*texts: str, first: str = "user", second: str = "bot") -> list[tuple[str, str]]:
    """Alternating turns, ``first`` speaking first."""
    return [(first if index % 2 == 0 else second, text) for index, text in enumerate(texts)]
