"""Joining a study through its invite link, and the consent page.

``/work/join/<token>/`` serves three kinds of visitor:

* a logged-in user: the study's name and description and a **Join** button (as before sign-up existed);
* a visitor without an account, when the study takes sign-ups (``Study.signup_open``): a sign-up form
  (username, password twice; no e-mail) and a link to log in instead; signing up logs them in, joins them
  and opens the consent page. When sign-ups are off they are sent to the login page, which comes back here;
* a crowd worker whose link carries the study's ``crowd_id_parameter`` (e.g. ``?PROLIFIC_PID=...``): their
  account is made (or found again) from the id, they are logged in and go on to the consent page. Other
  parameters platforms add (``STUDY_ID``, ``SESSION_ID``) are ignored. Someone already logged in as
  another user (the researcher trying their own link, a second participant on a shared computer) is never
  switched behind their back: a page names the account they are in and asks them to confirm (a POST)
  before it is signed out; the worker's own account, logged in already, goes straight on.

``/work/<study>/consent/`` shows the study's consent text (or its description and instructions) with an
"I agree" box; accepting it is needed before the first item of any task (annotation/joining/admission.py).
Views only translate HTTP; the services are in annotation/services/joining.py. New accounts (sign-up form
and crowd link) are rate-limited per client and per invite link (kernel/http/rate_limits.py: 429, Retry-After).
"""

from __future__ import annotations

from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation.joining.forms import ConsentForm, SignupForm
from annotation.models import Annotator, Study
from annotation.selectors.admission import admission_step, consent_text
from annotation.selectors.joining import crowd_worker_annotator
from annotation.services.annotators import InviteInvalid, annotator_join, study_for_invite
from annotation.services.joining import (
    SignupInvalid,
    annotator_consent,
    crowd_worker_id_problem,
    crowd_worker_join,
    signup_study,
    volunteer_signup,
)
from kernel.http.rate_limits import signup_refused, signup_retry_after
from kernel.permissions import authenticated_user

CROWD_SWITCH_FIELD = "continue_as_crowd_worker"  # the confirmation of the page crowd_switch.html


def _refused(request: HttpRequest, message: str, status: int = 404) -> HttpResponse:
    return render(request, "annotation/work/invite_invalid.html", {"message": message}, status=status)


def _onward(annotator: Annotator) -> HttpResponse:
    """Where a volunteer goes after joining or consenting: the step still to take, else the study page."""
    step = admission_step(annotator=annotator)
    if step is not None and step.step != "failed":
        return redirect(step.url_name, study_id=annotator.study_id)
    return redirect("work:study", study_id=annotator.study_id)


def _crowd_join(request: HttpRequest, token: str, study: Study) -> HttpResponse:
    parameter = study.crowd_id_parameter
    worker_id = request.GET.get(parameter, "").strip()
    problem = crowd_worker_id_problem(parameter=parameter, value=worker_id)
    if problem is not None:
        return _refused(request, problem, status=400)
    if request.user.is_authenticated:
        known = crowd_worker_annotator(study=study, worker_id=worker_id)
        if known is not None and known.user_id == request.user.pk:
            return _onward(known)  # the worker, back in their own session
        if not (request.method == "POST" and request.POST.get(CROWD_SWITCH_FIELD)):
            return _crowd_switch_page(request, token, study, worker_id, new_worker=known is None)
    if crowd_worker_annotator(study=study, worker_id=worker_id) is None:  # a new account: counted
        retry_after = signup_retry_after(request, invite=token)
        if retry_after is not None:
            return signup_refused(request, retry_after)
    try:
        annotator = crowd_worker_join(token=token, worker_id=worker_id)
    except InviteInvalid as invalid:
        return _refused(request, str(invalid))
    assert annotator.user is not None
    if request.user.is_authenticated:
        logout(request)  # confirmed on the page: the other account's session ends here
    login(request, annotator.user, backend="django.contrib.auth.backends.ModelBackend")
    return _onward(annotator)


def _crowd_switch_page(
    request: HttpRequest, token: str, study: Study, worker_id: str, *, new_worker: bool
) -> HttpResponse:
    """Who is logged in, and a POST button to sign them out and go on as the crowd worker; a link that
    would refuse a new worker says so at once, before anyone is signed out."""
    if new_worker:
        try:
            study_for_invite(token=token)
        except InviteInvalid as invalid:
            return _refused(request, str(invalid))
    return render(
        request,
        "annotation/work/crowd_switch.html",
        {
            "study": study,
            "username": authenticated_user(request).get_username(),
            "parameter": study.crowd_id_parameter,
            "worker_id": worker_id,
            "new_worker": new_worker,
            "action": request.get_full_path(),
            "confirm_field": CROWD_SWITCH_FIELD,
        },
    )


def _signup(request: HttpRequest, token: str, study: Study) -> HttpResponse:
    """A visitor without an account: the sign-up form (GET) or the new account (POST)."""
    try:
        signup_study(token=token)
    except InviteInvalid as closed:
        if request.method == "GET":
            return redirect_to_login(request.get_full_path())
        return _refused(request, str(closed), status=403)
    form = SignupForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        retry_after = signup_retry_after(request, invite=token)
        if retry_after is not None:
            return signup_refused(request, retry_after)
        try:
            annotator = volunteer_signup(
                token=token,
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
            )
        except SignupInvalid as invalid:
            form.add_error(invalid.field if invalid.field in form.fields else None, invalid.message)
        except InviteInvalid as closed:
            return _refused(request, str(closed), status=403)
        else:
            assert annotator.user is not None
            login(request, annotator.user, backend="django.contrib.auth.backends.ModelBackend")
            return _onward(annotator)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "annotation/work/join.html",
        {"study": study, "member": False, "signup_form": form, "login_next": request.path},
        status=status,
    )


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, token: str) -> HttpResponse:
    """The invite link: sign up, log in, or join (see the module docstring)."""
    study = Study.objects.filter(invite_token=token).first()
    if study is not None and study.crowd_id_parameter and study.crowd_id_parameter in request.GET:
        return _crowd_join(request, token, study)
    try:
        study = study_for_invite(token=token)
    except InviteInvalid as invalid:
        return _refused(request, str(invalid))
    if not request.user.is_authenticated:
        return _signup(request, token, study)
    user = authenticated_user(request)
    if request.method == "POST":
        try:
            annotator = annotator_join(token=token, user=user)
        except InviteInvalid as invalid:
            return _refused(request, str(invalid))
        return redirect("work:study", study_id=annotator.study_id)
    member = Annotator.objects.filter(study=study, user=user).exists()
    return render(request, "annotation/work/join.html", {"study": study, "member": member})


@login_required
@require_http_methods(["GET", "POST"])
def consent(request: HttpRequest, study_id: int) -> HttpResponse:
    """The study's consent text and an "I agree" box; accepting opens the qualification round or the tasks."""
    annotator = get_object_or_404(
        Annotator.objects.select_related("study"), study_id=study_id, user=authenticated_user(request)
    )
    form = ConsentForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        annotator_consent(annotator=annotator)
        return _onward(annotator)
    return render(
        request,
        "annotation/work/consent.html",
        {
            "study": annotator.study,
            "annotator": annotator,
            "text": consent_text(study=annotator.study),
            "form": form,
        },
        status=400 if request.method == "POST" else 200,
    )
