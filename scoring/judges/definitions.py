"""The judges a scoring request asks for: one per question of the study, stored by content so that the
metric ``llm-judge:<key>`` means the same judge in every process and every later report; or, with a
pairwise template, one pairwise judge asking the study's pairwise question (``llm-pairwise:<key>``, which a
run computes per pair of replies: scoring/services/pairwise_chunks.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User

from annotation.models import Study
from scoring.judges.backends import judges_available
from scoring.judges.templates import template_named
from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, BACKENDS, JudgeDefinition
from scoring.metrics.llm_judge.judging import READ_EXPECTATION, READS
from scoring.metrics.llm_judge.pairwise import pairwise_judge_name, pairwise_question
from scoring.metrics.llm_judge.prompts import JudgeQuestion, PromptTemplate
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.metrics.llm_judge.scale import JudgeScale
from scoring.models import JudgeRecord

DEFAULT_QUESTION_TEXT = "How good is the reply to the dialog context?"
JUDGE_REQUEST_FIELDS = ("template", "backend", "model", "questions", "read")


class JudgeRequestError(ValueError):
    """A judge that cannot be asked for as given; the message starts with the field's name."""

    @property
    def field(self) -> str:
        """The field of :class:`JudgeRequest` the message is about ("" when it names none)."""
        head = str(self).split(":", 1)[0]
        return head if head in JUDGE_REQUEST_FIELDS else ""


@dataclass(frozen=True)
class JudgeRequest:
    """A judge as a form, the API or the command line asks for it: ``questions`` empty for all of them;
    ``pairwise`` asks for the pairwise judge (a pairwise template asks for it anyway)."""

    template: str
    backend: str = BACKEND_LOCAL
    model: str = ""
    questions: tuple[str, ...] = ()
    read: str = READ_EXPECTATION
    pairwise: bool = False


def study_questions(study: Study) -> list[JudgeQuestion]:
    """The study's rating questions as a judge asks them, each with every quality of the study."""
    rows = list(study.questions.all())
    qualities = tuple((row.name, row.prompt) for row in rows)
    return [
        JudgeQuestion(
            name=row.name,
            text=row.prompt or DEFAULT_QUESTION_TEXT,
            scale=JudgeScale(
                row.scale_min, row.scale_max, tuple(str(label) for label in row.labels), row.is_slider
            ),
            qualities=qualities,
        )
        for row in rows
    ]


def judge_definitions(
    *, study: Study, request: JudgeRequest, user: User | AnonymousUser | None
) -> list[JudgeDefinition]:
    """One definition per question asked; a JudgeRequestError naming the field that is wrong."""
    model, template = _model_and_template(request, user)
    if template.pairwise or request.pairwise:
        return [_pairwise_definition(study=study, request=request, template=template, model=model)]
    questions = study_questions(study)
    by_name = {question.name: question for question in questions}
    unknown = [name for name in request.questions if name not in by_name]
    if unknown:
        raise JudgeRequestError(
            f"questions: {', '.join(unknown)} not in the study (its questions: {', '.join(by_name) or 'none'})"
        )
    chosen = [by_name[name] for name in request.questions] if request.questions else questions
    if not chosen:
        raise JudgeRequestError("questions: the study has no questions to judge; add one first")
    try:
        return [
            JudgeDefinition(template, question, request.backend, model, request.read) for question in chosen
        ]
    except ValueError as error:
        raise JudgeRequestError(str(error)) from None


def _model_and_template(
    request: JudgeRequest, user: User | AnonymousUser | None
) -> tuple[str, PromptTemplate]:
    """The model (the only one there is when the request names none) and the template a request names;
    a JudgeRequestError naming the field otherwise."""
    if request.backend not in BACKENDS:
        raise JudgeRequestError(f"backend: {request.backend!r} is not one of {', '.join(BACKENDS)}")
    if request.read not in READS:
        raise JudgeRequestError(f"read: {request.read!r} is not one of {', '.join(READS)}")
    available = judges_available()
    known = available.names(request.backend)
    model = request.model or (known[0] if len(known) == 1 else "")
    if model not in known:
        where = "local models" if request.backend == BACKEND_LOCAL else "endpoints"
        problem = f" ({available.problem})" if available.problem and request.backend != BACKEND_LOCAL else ""
        raise JudgeRequestError(
            f"model: {request.model!r} is not one of the {where}: {', '.join(known) or 'none'}{problem}"
        )
    try:
        return model, template_named(request.template, user)
    except ValueError as error:
        raise JudgeRequestError(f"template: {error}") from None


def file_judge_metric_names(
    *, request: JudgeRequest, question: JudgeQuestion, user: User | AnonymousUser | None = None
) -> list[str]:
    """The metric names of a judge asking ``question`` of replies outside any study (``score_files``), its
    definition stored: its score and its mass on labels."""
    model, template = _model_and_template(request, user)
    if template.pairwise or request.pairwise:
        raise JudgeRequestError(
            f"template: {template.name!r} compares two replies; a file gives one reply per line: choose a "
            "rating template"
        )
    try:
        definition = JudgeDefinition(template, question, request.backend, model, request.read)
    except ValueError as error:
        raise JudgeRequestError(str(error)) from None
    _stored(definition, user)
    return [definition.metric_name, definition.mass_name]


def _stored(definition: JudgeDefinition, user: User | AnonymousUser | None) -> None:
    JudgeRecord.objects.get_or_create(
        key=definition.key(),
        defaults={
            "definition": definition.as_json(),
            "created_by": user if user is not None and user.is_authenticated else None,
        },
    )


def _pairwise_definition(
    *, study: Study, request: JudgeRequest, template: PromptTemplate, model: str
) -> JudgeDefinition:
    """The pairwise judge of ``study``: the study's pairwise question on the nominal scale A / B / C. Its
    verdict is read from the labels' probabilities (both orders averaged), so ``read`` is always the
    expectation: the same judge has one name whatever reading was asked for."""
    if not template.pairwise:
        raise JudgeRequestError(
            f"template: {template.name!r} rates one reply; a pairwise judge needs a pairwise template "
            f"({', '.join(name for name, found in BUILT_IN_TEMPLATES.items() if found.pairwise)} or your own)"
        )
    if not study.pairwise_enabled:
        raise JudgeRequestError(
            f"template: {template.name!r} compares two replies, and the study {study.name!r} has no pairwise "
            "task (pairwise_enabled is off); choose a rating template"
        )
    if request.questions:
        raise JudgeRequestError(
            "questions: a pairwise judge asks the study's pairwise question (pairwise_prompt), not its "
            "rating questions"
        )
    try:
        return JudgeDefinition(template, pairwise_question(study.pairwise_prompt), request.backend, model)
    except ValueError as error:
        raise JudgeRequestError(str(error)) from None


def judge_metric_names(
    *, study: Study, requests: Sequence[JudgeRequest], user: User | AnonymousUser | None
) -> list[str]:
    """The metric names of the judges asked for (each judge's score, then its mass on labels; a pairwise
    judge's one name), their definitions stored."""
    names: list[str] = []
    for request in requests:
        for definition in judge_definitions(study=study, request=request, user=user):
            _stored(definition, user)
            if definition.template.pairwise:
                names.append(pairwise_judge_name(definition))
            else:
                names += [definition.metric_name, definition.mass_name]
    return list(dict.fromkeys(names))
