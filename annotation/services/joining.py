"""Joining a study: a new volunteer signs up through the invite link, a crowd worker arrives with
their platform id in the link, and every volunteer accepts the consent text before their first item.

* :func:`volunteer_signup`: a username and a password (validated by the page's form), no e-mail; the
  account is a plain user (no group, no staff flag), so it never has researcher rights
  (kernel/roles.py), and it joins the study at once.
* :func:`crowd_worker_join`: "URL login" as crowd platforms use it (Prolific's ``PROLIFIC_PID``, MTurk's
  ``workerId``; the way Potato does it): the id in the invite link names the person. The first visit
  creates an account with an unusable password and joins the study; a later visit with the same id finds
  the same annotator (``Annotator.external_worker_id``), never a second one. Accounts are per study: the
  same worker in two studies gets two accounts, so knowing someone's worker id opens at most their queue
  in the study whose link carries it.
* :func:`annotator_consent`: records when the volunteer accepted (once; accepting again changes nothing).
"""

from __future__ import annotations

import re
import secrets

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Annotator, Study
from annotation.services.annotators import InviteInvalid, annotator_join, study_for_invite

WORKER_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
USERNAME_MAX = 150  # django.contrib.auth's User.username


class SignupInvalid(Exception):
    """A sign-up that cannot go through; ``field`` names the form field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def signup_study(*, token: str) -> Study:
    """The invite's study when it admits new people and lets them create an account."""
    study = study_for_invite(token=token)
    if not study.signup_open:
        raise InviteInvalid(
            f"The study “{study.name}” does not take new sign-ups through its link; "
            "log in with an account you already have."
        )
    return study


@transaction.atomic
def volunteer_signup(*, token: str, username: str, password: str) -> Annotator:
    """A new user with this username and password, joined to the invite's study (their annotator role).

    The password must already be validated (the page uses Django's password validators); a username taken
    meanwhile raises :class:`SignupInvalid` on ``username`` and nothing is created."""
    signup_study(token=token)
    if User.objects.filter(username__iexact=username).exists():
        raise SignupInvalid("username", "A user with that username already exists; choose another one.")
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, password=password)
    except IntegrityError:  # someone took it between the check and the insert
        raise SignupInvalid(
            "username", "A user with that username already exists; choose another one."
        ) from None
    return annotator_join(token=token, user=user)


def crowd_worker_id_problem(*, parameter: str, value: str) -> str | None:
    """Why ``value`` is not a usable worker id (None when it is): letters, digits, - and _, at most 100."""
    if WORKER_ID.fullmatch(value):
        return None
    if not value:
        return f"{parameter}: the worker id is empty; open the study from the crowd platform's link."
    return (
        f"{parameter}: “{value[:120]}” is not a worker id; it may contain only letters, digits, - and _, "
        "at most 100 characters. Open the study from the crowd platform's link."
    )


def _crowd_username(study: Study, worker_id: str) -> str:
    """A free username from the platform parameter and the id, e.g. ``prolific_pid-5f3a...``; the study's
    id and then a random tail are added when it is taken (by the same worker elsewhere, or by chance)."""
    platform = re.sub(r"[^a-z0-9_]", "", study.crowd_id_parameter.lower()) or "crowd"
    base = f"{platform}-{worker_id}"[: USERNAME_MAX - 20]
    for candidate in (base, f"{base}-s{study.pk}", f"{base}-{secrets.token_hex(4)}"):
        if not User.objects.filter(username__iexact=candidate).exists():
            return candidate
    return f"{base}-{secrets.token_hex(8)}"


@transaction.atomic
def crowd_worker_join(*, token: str, worker_id: str) -> Annotator:
    """The annotator of the crowd worker ``worker_id`` in the invite's study, created with an account on
    the first visit. A returning worker gets back in even when the link admits nobody new any more.

    Raises :class:`InviteInvalid` for a bad link, a study without a crowd parameter, an invalid id, or a
    new worker at a closed link."""
    study = Study.objects.filter(invite_token=token).first()
    if study is None or not study.crowd_id_parameter:
        raise InviteInvalid(
            "This invite link is not valid for crowd workers; ask the researcher for a new one."
        )
    problem = crowd_worker_id_problem(parameter=study.crowd_id_parameter, value=worker_id)
    if problem is not None:
        raise InviteInvalid(problem)
    # One crowd join at a time per study, so two tabs opened at once cannot make two annotators for one id.
    Study.objects.select_for_update().filter(pk=study.pk).first()
    existing = (
        Annotator.objects.select_related("user", "study")
        .filter(study=study, external_worker_id=worker_id, user__isnull=False)
        .first()
    )
    if existing is not None:
        return existing
    study_for_invite(token=token)  # a new worker needs an open link
    user = User(username=_crowd_username(study, worker_id))
    user.set_unusable_password()
    user.save()
    annotator = annotator_join(token=token, user=user)
    annotator.external_worker_id = worker_id
    annotator.save(update_fields=["external_worker_id"])
    return annotator


def annotator_consent(*, annotator: Annotator) -> Annotator:
    """Record that the annotator accepted the study's consent text (the first time only)."""
    Annotator.objects.filter(pk=annotator.pk, consented_at__isnull=True).update(consented_at=timezone.now())
    annotator.refresh_from_db(fields=["consented_at"])
    return annotator


CROWD_PARAMETER = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")
COMPLETION_CODE_MAX = 60  # Study.completion_code's max_length
CONSENT_TEXT_MAX = 20_000


def joining_settings_problems(
    *, crowd_id_parameter: str, completion_code: str, consent_text: str
) -> list[tuple[str, str]]:
    """(field, message) for the joining settings of a study that cannot be stored (the settings service
    adds them to its own; the qualification threshold is one of its ranges)."""
    problems = []
    if crowd_id_parameter and not CROWD_PARAMETER.fullmatch(crowd_id_parameter):
        problems.append(
            (
                "crowd_id_parameter",
                "a URL parameter name: a letter, then letters, digits, - or _ (at most 40), e.g. PROLIFIC_PID",
            )
        )
    if len(completion_code) > COMPLETION_CODE_MAX:
        problems.append(("completion_code", f"at most {COMPLETION_CODE_MAX} characters"))
    elif completion_code != completion_code.strip() or any(
        not char.isprintable() for char in completion_code
    ):
        problems.append(("completion_code", "no spaces at the ends and no control characters"))
    if len(consent_text) > CONSENT_TEXT_MAX:
        problems.append(("consent_text", f"at most {CONSENT_TEXT_MAX} characters"))
    return problems
