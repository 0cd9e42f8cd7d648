"""Test settings: a SQLite *file* (so worker processes started by the tests see the same data)."""

import os
import tempfile
from pathlib import Path

from .base import *  # noqa: F403
from .base import DATABASES

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# pytest-django creates the test database under this name; integration tests hand the same path
# to the Celery worker process they start (as DATABASE_URL, and as DIALEVAL_TEST_DB_NAME so that the
# worker's settings name the same file rather than one derived from the worker's own pid).
TEST_DB_DIR = Path(os.environ.get("DIALEVAL_TEST_DB_DIR", tempfile.gettempdir()))
TEST_DB_NAME = os.environ.get("DIALEVAL_TEST_DB_NAME") or str(
    TEST_DB_DIR / f"dialeval-test-{os.getpid()}.sqlite3"
)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": TEST_DB_NAME}
# Word vector stores of the tests outside var/, in one folder per test session that a Celery worker started by
# the integration tests inherits through the environment (its settings then name the same folder).
DIALEVAL_VECTORS_DIR = Path(
    os.environ.setdefault(
        "DIALEVAL_TEST_VECTORS_DIR", str(TEST_DB_DIR / f"dialeval-test-vectors-{os.getpid()}")
    )
)
# The judges' converted models (scoring/metrics/llm_judge/local_model.py) in one folder that every test process
# and every worker it starts shares, from one test session to the next: a copy is named by its file's sha256.
DIALEVAL_LLM_CONVERTED_DIR = Path(
    os.environ.setdefault("DIALEVAL_LLM_CONVERTED_DIR", str(TEST_DB_DIR / "dialeval-test-llm-converted"))
)

# Rate limits (kernel/http/rate_limits.py) high enough that no test trips them by accident; the tests of the
# limits lower them with override_settings. Counters in this process's memory, not a Redis.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "rate_limits": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "rate-limits"},
}
DIALEVAL_API_RATE_USER = "100000/minute"
DIALEVAL_API_RATE_ANON = "100000/minute"
DIALEVAL_API_RATE_BAD_TOKENS = "100000/minute"
DIALEVAL_API_RATE_JUDGE_PREVIEW = "100000/minute"
DIALEVAL_SIGNUP_RATE_CLIENT = "100000/hour"
DIALEVAL_SIGNUP_RATE_INVITE = "100000/hour"
AXES_FAILURE_LIMIT = 100000
DIALEVAL_LOGIN_FAILURE_RATE_CLIENT = "100000/hour"
