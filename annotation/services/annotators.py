"""Joining a study through its invite link (no self-signup into studies one was not invited to)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from annotation.models import Annotator, AnnotatorOrigin, Study, new_invite_token


class InviteInvalid(Exception):
    pass


class InviteUnknown(InviteInvalid):
    """No study has this invite token (the API answers 404; a closed study's token is a 400)."""


def study_for_invite(*, token: str) -> Study:
    study = Study.objects.filter(invite_token=token).first()
    if study is None:
        raise InviteUnknown("This invite link is not valid; ask the researcher for a new one.")
    if not study.invites_open:
        raise InviteInvalid(f"The study “{study.name}” is not admitting new annotators.")
    return study


def annotator_join(*, token: str, user: User) -> Annotator:
    """The user's annotator role in the invite's study, created on first use (idempotent)."""
    study = study_for_invite(token=token)
    existing = Annotator.objects.filter(study=study, user=user).first()
    if existing is not None:
        return existing
    taken = set(Annotator.objects.filter(study=study).values_list("pseudonym", flat=True))
    number = len(taken)
    for _ in range(20):
        number += 1
        pseudonym = f"annotator-{number:03d}"
        if pseudonym in taken:  # a gap left by a deleted annotator, or an imported name
            continue
        try:
            with transaction.atomic():
                return Annotator.objects.create(
                    study=study, user=user, pseudonym=pseudonym, origin=AnnotatorOrigin.VOLUNTEER
                )
        except IntegrityError:  # a concurrent join took the number, or this user joined in another tab
            existing = Annotator.objects.filter(study=study, user=user).first()
            if existing is not None:
                return existing
    raise InviteInvalid("Too many people are joining at once; try the link again.")


def invite_token_rotate(*, study: Study) -> str:
    """A new invite link; the old one stops working (people already in stay in)."""
    study.invite_token = new_invite_token()
    study.save(update_fields=["invite_token"])
    return study.invite_token
