"""Access rules shared by the web views and the REST API."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission

from kernel.roles import user_is_researcher


def authenticated_user(request: Any) -> User:
    """The logged-in user of a request that passed an authentication check (never AnonymousUser)."""
    user = request.user
    if not isinstance(user, User):
        raise PermissionDenied("Log in first.")
    return user


def researcher_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not user_is_researcher(request.user):
            raise PermissionDenied("This page is for researchers.")
        return view(request, *args, **kwargs)

    return wrapper


class IsResearcher(BasePermission):
    message = "This endpoint is for researchers."

    def has_permission(self, request: Any, view: Any) -> bool:
        return user_is_researcher(request.user)
