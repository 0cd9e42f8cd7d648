"""Production: PostgreSQL through DATABASE_URL, Redis through REDIS_URL, secrets from the environment."""

from config.env import env_bool, env_int, env_str

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY must be set in production")
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
SECURE_CONTENT_TYPE_NOSNIFF = True
# Behind the TLS-terminating proxy whose X-Forwarded-Proto the app trusts (DJANGO_SECURE_PROXY_SSL_HEADER=true,
# docs/deployment.md "Headers"): a plain-HTTP request is redirected to HTTPS, and browsers are told to use
# HTTPS only for a year (HSTS), this host's subdomains included. Without that proxy the app cannot tell HTTPS
# from HTTP, so neither is on unless asked for. /health/ and /health/workers/ are never redirected: the
# compose healthcheck asks them over plain HTTP inside the container.
BEHIND_HTTPS_PROXY = env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", BEHIND_HTTPS_PROXY)
SECURE_REDIRECT_EXEMPT = [r"^health/"]
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 365 * 24 * 3600 if BEHIND_HTTPS_PROXY else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
# The preload directive asks browsers' built-in lists to take the domain, which is hard to undo; it is for the
# domain's owner to opt into (hstspreload.org asks projects not to send it by default), so `check --deploy`'s
# reminder of it is silenced while it is off.
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
