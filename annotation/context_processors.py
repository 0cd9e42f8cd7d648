from django.http import HttpRequest

from annotation.roles import user_is_researcher


def roles(request: HttpRequest) -> dict[str, bool]:
    return {"is_researcher": user_is_researcher(request.user)}
