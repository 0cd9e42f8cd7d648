"""`make run`: SQLite file, the local Redis the run script starts, gunicorn. DEBUG stays off unless asked for
(`DJANGO_DEBUG=1 make run`): volunteers reach this server too, and Django's debug pages show settings and
code. Static files are collected by the run script and served by WhiteNoise with hashed names, as in
production, so a page that works here works there; production also stores them compressed, which takes
collectstatic about 90 s here (the Docker build pays it once), so `make run` skips that step."""

from config.env import env_bool

from .base import *  # noqa: F403

DEBUG = env_bool("DJANGO_DEBUG", False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"},
}
