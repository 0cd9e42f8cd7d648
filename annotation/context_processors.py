from django.http import HttpRequest

from kernel.roles import user_is_researcher


def roles(request: HttpRequest) -> dict[str, bool]:
    # An error page may render for a request refused before AuthenticationMiddleware set request.user
    # (a Host outside ALLOWED_HOSTS): such a visitor is nobody.
    return {"is_researcher": user_is_researcher(getattr(request, "user", None))}
