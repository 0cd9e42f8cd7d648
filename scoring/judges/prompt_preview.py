"""What a judge's model reads for one reply of a study, shown before a run starts (the run form's preview,
``GET /api/studies/<id>/judge-preview/``).

Rendered in the request, without the model: the system message, the user message and the answer prefix
(:meth:`PromptTemplate.messages`), and, for an endpoint of the ``completions`` API, the very text sent
(:func:`server_client.formatted`, the endpoint's ``prompt_format``). What a local model reads is its chat
template over the messages (:meth:`LocalJudgeModel.formatted`): that needs the model's tokenizer, which only
a worker loads, so it comes with the preview's reading (:mod:`scoring.judges.previews`). An endpoint of the
``chat`` API formats the messages itself, with its own chat template.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User

from annotation.models import Study
from scoring.judges.backends import endpoint_settings
from scoring.judges.definitions import JudgeRequest, judge_definitions
from scoring.judges.study_items import StudyReply, study_reply_at
from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, JudgeDefinition
from scoring.metrics.llm_judge.prompts import JudgeItem
from scoring.metrics.llm_judge.server_client import API_COMPLETIONS, formatted

LOCAL_NOTE = (
    "the local model reads its chat template over these messages, then the answer prefix; the exact text "
    "comes with the reading (it needs the model's tokenizer, which a worker loads)"
)
CHAT_NOTE = (
    "the endpoint's chat API formats these messages with its own chat template; the answer prefix is sent "
    "as the start of the assistant's message"
)


@dataclass(frozen=True)
class JudgePrompt:
    """A judge's messages for one reply; ``formatted`` the text the model reads when it is known without
    the model (None otherwise), ``formatted_note`` how it is made."""

    system: str
    user: str
    answer_prefix: str
    formatted: str | None
    formatted_note: str


@dataclass(frozen=True)
class PromptPreview:
    study: Study
    definition: JudgeDefinition
    reply: StudyReply
    prompt: JudgePrompt


def judge_prompt(definition: JudgeDefinition, item: JudgeItem) -> JudgePrompt:
    """The judge's prompt for ``item`` (module docstring)."""
    system, user, prefix = definition.template.messages(definition.question, item)
    if definition.backend == BACKEND_LOCAL:
        return JudgePrompt(system, user, prefix, None, LOCAL_NOTE)
    options = endpoint_settings()[definition.model].options
    if str(options.get("api", API_COMPLETIONS)) != API_COMPLETIONS:
        return JudgePrompt(system, user, prefix, None, CHAT_NOTE)
    prompt_format = str(options.get("prompt_format", "chatml"))
    note = f"the completions API: the app formats the prompt ({prompt_format}), the answer prefix at its end"
    return JudgePrompt(system, user, prefix, formatted(prompt_format, system, user, prefix), note)


def judge_definition_for(
    *, study: Study, request: JudgeRequest, question: str, user: User | AnonymousUser | None
) -> JudgeDefinition:
    """The judge ``request`` asks on ``question`` ("": the study's first question); a JudgeRequestError
    naming the field."""
    asked = JudgeRequest(
        template=request.template,
        backend=request.backend,
        model=request.model,
        questions=(question,) if question else (),
        read=request.read,
    )
    return judge_definitions(study=study, request=asked, user=user)[0]


def judge_prompt_preview(
    *,
    study: Study,
    request: JudgeRequest,
    question: str,
    position: int,
    references: str,
    user: User | AnonymousUser | None,
) -> PromptPreview:
    """The judge's prompt for the study's reply ``position``; a JudgeRequestError or a
    ReplyPositionError naming the field that is wrong."""
    definition = judge_definition_for(study=study, request=request, question=question, user=user)
    reply = study_reply_at(study=study, position=position, references=references)
    return PromptPreview(study, definition, reply, judge_prompt(definition, reply.item))
