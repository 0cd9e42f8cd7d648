"""What annotators hand back: ratings (and attention-check answers), references, diversity judgments.

Each submission is validated in full before anything is written, and written in one transaction with
the completion of its assignment; invalid input raises :class:`SubmissionInvalid` naming the field.

Time and typing are measured by the server: ``seconds_spent`` runs from the moment the item
was handed out (or reopened) to the submission (:func:`annotation.services.assignment.server_seconds`).
The ``seconds`` a client sends is stored beside it as ``client_seconds`` and never used for a flag; a
reference's "pasted" flag comes from the key presses the page counted against the visible length of the
text, and a client that sends no count gets a "no-keystrokes" flag rather than the benefit of the doubt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.db import transaction

from annotation import reference_rules
from annotation.models import (
    Annotator,
    Assignment,
    AssignmentStatus,
    CheckAction,
    CheckAnswer,
    DiversityJudgment,
    Question,
    Rating,
    Reference,
    ReferenceOrigin,
    Response,
    WorkKind,
)
from annotation.services.assignment import (
    assignment_complete,
    assignment_for,
    assignment_hold,
    server_seconds,
)
from kernel.data_version import study_data_changed


class SubmissionInvalid(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class SubmitResult:
    warnings: list[str] = field(default_factory=list)
    blocked: bool = False
    remaining: int = 0  # references still to write for this context (collection task)


def _own(
    annotator: Annotator, assignment_id: int, kinds: Sequence[str], loaded: Assignment | None = None
) -> Assignment:
    """The annotator's assignment ``assignment_id`` of one of ``kinds``. ``loaded``: the same assignment as
    the caller already read it with :func:`assignment_for` (the API reads it to answer 404 before looking
    at the body), used instead of a second read; its status is re-checked by the conditional UPDATE that
    completes it (a change in between is :class:`SlotLost`, as it was when read here)."""
    assignment = loaded_own(annotator, assignment_id, loaded)
    if assignment.item.kind not in kinds:
        raise SubmissionInvalid("assignment", f"item {assignment_id} is not a {' or '.join(kinds)} item")
    return assignment


def loaded_own(annotator: Annotator, assignment_id: int, loaded: Assignment | None) -> Assignment:
    """``loaded`` when it is the annotator's assignment ``assignment_id``, else that assignment read now;
    :class:`SubmissionInvalid` when they have none of that id."""
    if loaded is not None and loaded.pk == assignment_id and loaded.annotator_id == annotator.pk:
        return loaded
    try:
        return assignment_for(annotator=annotator, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise SubmissionInvalid("assignment", f"no item {assignment_id} is assigned to you") from None


def _seconds(value: float | None) -> float | None:
    if value is None:
        return None
    if not 0 <= value < 86_400:
        raise SubmissionInvalid("seconds", f"{value} is not a time spent on one item")
    return float(value)


def validated_values(questions: Sequence[Question], values: Mapping[str, object]) -> dict[int, int]:
    """question id -> value, every question answered with a point of its scale."""
    unknown = sorted(set(values) - {question.name for question in questions})
    if unknown:
        raise SubmissionInvalid(unknown[0], "this study asks no such question")
    checked: dict[int, int] = {}
    for question in questions:
        raw = values.get(question.name)
        if raw is None or raw == "":
            raise SubmissionInvalid(question.name, "choose a score")
        try:
            value = int(str(raw))
        except ValueError:
            raise SubmissionInvalid(question.name, f"{raw!r} is not a whole number") from None
        if not question.scale_min <= value <= question.scale_max:
            raise SubmissionInvalid(
                question.name, f"{value} is outside the scale {question.scale_min}-{question.scale_max}"
            )
        checked[question.pk] = value
    return checked


@transaction.atomic
def rating_submit(
    *,
    annotator: Annotator,
    assignment_id: int,
    values: Mapping[str, object],
    seconds: float | None = None,
    loaded: Assignment | None = None,
) -> SubmitResult:
    """Ratings for every question of the study about one reply (or the answer to an attention check).
    Submitting again for an answered item (the annotator went back) replaces the earlier values.
    ``seconds`` is the client's own figure, stored as ``client_seconds``."""
    assignment = _own(annotator, assignment_id, (WorkKind.RATE, WorkKind.CHECK), loaded)
    questions = list(Question.objects.filter(study_id=annotator.study_id))
    checked = validated_values(questions, values)
    claimed = _seconds(seconds)
    first_answer = assignment.status != AssignmentStatus.DONE
    assignment_complete(assignment=assignment, seconds=server_seconds(assignment), client_seconds=claimed)
    spent = assignment.seconds_spent  # an edit adds its time to the first visit's
    claimed = assignment.client_seconds
    if assignment.item.kind == WorkKind.RATE:
        response_id = assignment.item.response_id
        assert response_id is not None  # a rating item always has its reply
        study_data_changed(study_id=annotator.study_id)  # runs once the ratings below are committed
        if first_answer:  # ratings are only ever written here, so there are none yet: plain inserts
            Rating.objects.bulk_create(
                Rating(
                    annotator=annotator,
                    response_id=response_id,
                    question_id=question_id,
                    value=value,
                    seconds_spent=spent,
                    client_seconds=claimed,
                )
                for question_id, value in checked.items()
            )
            return SubmitResult()
        for question_id, value in checked.items():
            Rating.objects.update_or_create(
                annotator=annotator,
                response_id=response_id,
                question_id=question_id,
                defaults={"value": value, "seconds_spent": spent, "client_seconds": claimed},
            )
        return SubmitResult()
    return _check_answer(annotator, assignment, checked, spent)


def _check_answer(
    annotator: Annotator, assignment: Assignment, checked: dict[int, int], spent: float | None
) -> SubmitResult:
    check = assignment.item.attention_check
    assert check is not None
    value = checked[check.question_id]
    CheckAnswer.objects.update_or_create(
        attention_check=check,
        annotator=annotator,
        defaults={"value": value, "passed": check.passes(value), "seconds_spent": spent},
    )
    if check.passes(value):
        return SubmitResult()
    study = annotator.study
    failures = CheckAnswer.objects.filter(annotator=annotator, passed=False).count()
    if failures > study.check_failures_allowed and study.check_action == CheckAction.BLOCK:
        Annotator.objects.filter(pk=annotator.pk).update(blocked=True)
        annotator.blocked = True
        return SubmitResult(
            warnings=["You missed too many attention checks; this study has no more items for you."],
            blocked=True,
        )
    return SubmitResult(
        warnings=[
            "That reply was an attention check, and your score was not the expected one. "
            "Please read each context and reply carefully."
        ]
    )


@transaction.atomic
def reference_add(
    *,
    annotator: Annotator,
    assignment_id: int,
    text: str,
    seconds: float | None = None,
    pasted: bool = False,
    keystrokes: int | None = None,
    loaded: Assignment | None = None,
) -> SubmitResult:
    """One reference for the context of a collection item; it is a reference of the context at once.

    ``seconds``, ``pasted`` and ``keystrokes`` come from the client: ``pasted`` (a confession) can only add
    a flag; the time used for the too-fast flag is the server's, from the item's hand-out or the writer's
    previous reference to this one."""
    assignment = _own(annotator, assignment_id, (WorkKind.WRITE,), loaded)
    context_id = assignment.item.context_id
    assert context_id is not None  # collection items always have a context
    text = text.strip()
    problem = reference_rules.length_problem(text)
    mine = list(
        Reference.objects.filter(
            context_id=context_id, author=annotator, origin=ReferenceOrigin.COLLECTED
        ).order_by("id")
    )
    if problem is None:
        problem = reference_rules.repeat_problem(text, [reference.text for reference in mine])
    if problem is not None:
        raise SubmissionInvalid("text", problem)
    if len(mine) >= assignment.quota:
        raise SubmissionInvalid("text", "you have already written every reply asked for this context")
    claimed = _seconds(seconds)
    if keystrokes is not None and not 0 <= keystrokes < 1_000_000:
        raise SubmissionInvalid("keystrokes", f"{keystrokes} is not a number of key presses")
    assignment_hold(assignment=assignment)  # not after a skip or a timeout that gave the slot away
    spent = server_seconds(assignment, since=mine[-1].created_at if mine else None)
    flags = reference_rules.typing_flags(text, pasted=pasted, keystrokes=keystrokes)
    if reference_rules.is_too_fast(text, spent):
        flags.append("too-fast")
    others = (
        Reference.objects.filter(context_id=context_id)
        .exclude(author=annotator)
        .values_list("text", flat=True)
    )
    if reference_rules.repeat_problem(text, list(others)) is not None:
        flags.append("same-as-existing")
    Reference.objects.create(
        context_id=context_id,
        text=text,
        origin=ReferenceOrigin.COLLECTED,
        author=annotator,
        seconds_spent=spent,
        client_seconds=claimed,
        keystrokes=keystrokes,
        flags=flags,
    )
    study_data_changed(study_id=annotator.study_id)  # multi-reference scoring reads it
    remaining = assignment.quota - len(mine) - 1
    if remaining == 0:
        total = sum(reference.seconds_spent or 0.0 for reference in mine) + spent
        client_total = None
        if claimed is not None:
            client_total = sum(reference.client_seconds or 0.0 for reference in mine) + claimed
        assignment_complete(assignment=assignment, seconds=total, client_seconds=client_total)
    # "Consistently" too fast: this reply and the ones just before it (Gupta et al., 2019, appendix A).
    earlier_fast = [
        ("too-fast" in reference.flags) for reference in mine[-(reference_rules.TOO_FAST_STREAK - 1) :]
    ]
    warnings = []
    if "too-fast" in flags and len(earlier_fast) == reference_rules.TOO_FAST_STREAK - 1 and all(earlier_fast):
        warnings.append(
            "You are writing replies very quickly. Please take the time to write thoughtful, different replies."
        )
    return SubmitResult(warnings=warnings, remaining=remaining)


@transaction.atomic
def diversity_submit(
    *,
    annotator: Annotator,
    assignment_id: int,
    appropriate: Sequence[int],
    meanings: int,
    seconds: float | None = None,
    loaded: Assignment | None = None,
) -> SubmitResult:
    """Gupta et al. (2019) section 5.2: which replies are appropriate, then how many meanings they carry."""
    assignment = _own(annotator, assignment_id, (WorkKind.DIVERSITY,), loaded)
    item = assignment.item
    assert item.context_id is not None
    assert item.system_id is not None
    group = set(
        Response.objects.filter(context_id=item.context_id, system_id=item.system_id).values_list(
            "pk", flat=True
        )
    )
    chosen = {int(pk) for pk in appropriate}
    if not chosen <= group:
        raise SubmissionInvalid("appropriate", "only the replies shown can be marked appropriate")
    lowest = 1 if chosen else 0
    if not lowest <= int(meanings) <= len(chosen):
        raise SubmissionInvalid(
            "meanings",
            f"with {len(chosen)} appropriate replies, the number of meanings is {lowest}-{len(chosen)}",
        )
    claimed = _seconds(seconds)
    assignment_complete(assignment=assignment, seconds=server_seconds(assignment), client_seconds=claimed)
    spent = assignment.seconds_spent
    judgment, _ = DiversityJudgment.objects.update_or_create(
        annotator=annotator,
        context_id=item.context_id,
        system_id=item.system_id,
        defaults={
            "meanings": int(meanings),
            "seconds_spent": spent,
            "client_seconds": assignment.client_seconds,
        },
    )
    judgment.appropriate.set(chosen)
    study_data_changed(study_id=annotator.study_id)
    return SubmitResult()


__all__ = [
    "SubmissionInvalid",
    "SubmitResult",
    "diversity_submit",
    "rating_submit",
    "reference_add",
]
