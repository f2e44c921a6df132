"""One settings module, driven by the environment (see README's configuration table)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse, urlsplit

import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from config.env import BASE_DIR, env_bool, env_float, env_int, env_list, env_str

# Lets admin.ModelAdmin[Model] and friends be subscripted at runtime, as the type stubs expect.
django_stubs_ext.monkeypatch()

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me")
# Off unless asked (DJANGO_DEBUG=true): a wrong URL shows the friendly 404 page, not the URL list.
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.google",
    "apps.core",
    "apps.library",
    "apps.connectors",
    "apps.search",
    "apps.llm",
    "apps.chat",
    "apps.organize",
    "apps.evaluation",
    "apps.inbox",
    "apps.web",
    "apps.mcp",
]
# The stand-ins for outside services (emulators/: `manage.py drive_emulator`) when the checkout
# holds them; the product imports none of them, so it starts the same without the folder.
if importlib.util.find_spec("emulators") is not None:
    INSTALLED_APPS.append("emulators")

MIDDLEWARE = [
    # /healthz and /readyz, answered before host checks, HTTPS redirects and sessions (kubelet probes).
    "apps.core.probes.ProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Times every request by its URL pattern (folderchat_http_request_duration_seconds).
    "apps.core.request_metrics.RequestMetricsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface's language: the language cookie, else the browser's Accept-Language (README "Languages").
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A signed-in person's own choice of language wins over the cookie and the browser's.
    "apps.core.middleware.UserLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, and sync only: the whole chain runs in sync mode under ASGI (it adds one thread hop to a
    # request, not two for each middleware).
    "apps.core.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Before the apps' templates: config/templates/admin/index.html adds the queues page to the admin index.
        "DIRS": [BASE_DIR / "config" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]


def _database_pool() -> dict[str, int] | None:
    """Django's connection pool (psycopg_pool), when DB_POOL_MAX_SIZE > 0: up to that many
    connections per process, each lent to one request at a time. Under ASGI every request runs its
    view in a thread of its own, so a persistent connection (DB_CONN_MAX_AGE) is not reused by the
    next request, and a new one costs milliseconds. Only the web process turns it on (the Procfile's
    web line, deploy/gunicorn.conf.py): a pool's threads and sockets would not survive the fork into
    Celery's prefork children."""
    max_size = env_int("DB_POOL_MAX_SIZE", 0)
    if max_size == 0:
        return None
    # Kept open while idle: one, so a quiet process's next request does not wait for a connect, and many
    # web processes hold few idle connections. Extras opened under load close after 10 idle minutes.
    min_size = env_int("DB_POOL_MIN_SIZE", 1)
    if max_size < 0 or not 0 <= min_size <= max_size:
        raise ImproperlyConfigured(
            f"DB_POOL_MAX_SIZE={max_size}, DB_POOL_MIN_SIZE={min_size}: the maximum must be positive (0: no pool) "
            "and the minimum from 0 to the maximum."
        )
    return {"min_size": min_size, "max_size": max_size}


def _database_from_url(url: str) -> dict[str, object]:
    parsed = urlparse(url)
    options: dict[str, object] = {key: values[-1] for key, values in parse_qs(parsed.query).items()}
    pool = _database_pool()
    if pool is not None:
        options["pool"] = pool
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parsed.path.lstrip("/")) or "postgres",
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": options.pop("host", None) or parsed.hostname or "",
        "PORT": str(parsed.port or ""),
        # Django refuses a pool beside persistent connections. Pooled, DB_CONN_MAX_AGE is ignored rather
        # than refused: one environment (deploy/k8s's ConfigMap) gives it to the workers and the web alike.
        "CONN_MAX_AGE": 0 if pool is not None else env_int("DB_CONN_MAX_AGE", 0),
        # Pooled, Django has the pool check each connection it lends (one round trip).
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": options,
        # Each parallel test session (helpers, CI) may pick its own test database.
        "TEST": {"NAME": "test_folderchat" + os.environ.get("TEST_DB_SUFFIX", "")},
    }


DATABASE_URL = env_str("DATABASE_URL")
if not DATABASE_URL:
    raise RuntimeError(
        "DATABASE_URL is not set and var/services.env is missing: run `make services` "
        "(embedded PostgreSQL + Redis) or set DATABASE_URL and REDIS_URL."
    )
DATABASES = {"default": _database_from_url(DATABASE_URL)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # What every web process must see alike: the content endpoint's per-user rate.
    "shared": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL, "KEY_PREFIX": "cache"},
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
# The interface's languages, each named in itself (the language menu); catalogs in locale/<code>/.
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
LOGIN_URL = "/login/"

# --- Security for production (DEBUG off) ------------------------------------------------------
if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_CONTENT_TYPE_NOSNIFF = True

# --- REST API ---------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.core.token_auth.PersonalTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # A personal token reaches only what its scopes allow (apps.core.token_auth); sessions reach all.
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "apps.core.token_auth.TokenScopePermission",
    ],
    "DEFAULT_SCHEMA_CLASS": "apps.core.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "apps.core.api.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "apps.core.api.exception_handler",
    "DEFAULT_THROTTLE_RATES": {
        "search": env_str("THROTTLE_SEARCH", "120/min"),
        "chat": env_str("THROTTLE_CHAT", "30/min"),
        # GET /api/files/{id}/content: a PDF viewer sends a range per page it shows.
        "content": env_str("THROTTLE_CONTENT", "120/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Folder Chat API",
    "DESCRIPTION": "Talk to your folders: index, search and chat with citations.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and Redoc from the venv (drf-spectacular-sidecar's static files), not a CDN: /api/docs works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.core.openapi.event_stream_operations",
    ],
    # Several models have a "status" or "type" field with different choices: name each enum.
    "ENUM_NAME_OVERRIDES": {
        "FolderStatusEnum": "apps.library.models.FolderStatus",
        "FileStatusEnum": "apps.library.models.FileStatus",
        "ConversationStatusEnum": "apps.chat.models.ConversationStatus",
        "RunStatusEnum": "apps.chat.models.RunStatus",
        "MessageTypeEnum": "apps.chat.models.MessageType",
        "SuggestionStatusEnum": "apps.organize.models.SuggestionStatus",
        "EvaluationRunStatusEnum": "apps.evaluation.models.EvaluationRunStatus",
        "EvaluationModeEnum": "apps.evaluation.models.EvaluationMode",
    },
}
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAX_REQUEST_BYTES", 1_000_000)

# --- Celery -----------------------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 900)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 840)
# A delivered message is a lease: the worker holding it renews it every sixth of this window while
# it waits or runs (workers/leases.py), and any worker returns to its queue a message nobody renewed
# for the whole window, i.e. one held by a host that died (kill -9, power cut, OOM of the whole
# host). So a crashed host's work is redelivered about this long after the crash, however long
# the tasks themselves may run; see tests/deploy/test_host_crash.py.
_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 60)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _VISIBILITY_TIMEOUT,
    # kombu's restore lock (default 5 minutes): a host killed while holding it would stall every
    # other host's restores that long.
    "unacked_mutex_expire": _VISIBILITY_TIMEOUT,
    # One Redis list per priority 0-9 (apps/core/queues.py PRIORITY_STEPS, run_priority): fairness across folders.
    "priority_steps": list(range(10)),
}
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Encryption of secrets at rest (OAuth tokens) ---------------------------------------------
# Comma-separated Fernet keys; the first encrypts, all decrypt (rotation: prepend a new key,
# run `manage.py rotate_credentials_key`, then drop the old one). Derived from SECRET_KEY when
# unset, which is fine for development only.
FIELD_ENCRYPTION_KEYS = env_list("FIELD_ENCRYPTION_KEYS", [])

# --- Folders and indexing ---------------------------------------------------------------------
# `make run` indexes a copy of the bundled sample folder (`manage.py demo_folder`), so the demo's
# uploads, moves and guideline lines never write into the git checkout, which the tests read.
DEMO_SOURCE_FOLDER = BASE_DIR / "sample_folder"
DEMO_FOLDER = Path(os.environ.get("DEMO_FOLDER", str(BASE_DIR / "var" / "demo" / "sample_folder")))
LOCAL_FOLDER_ROOTS = env_list("LOCAL_FOLDER_ROOTS", [str(DEMO_FOLDER.parent), str(BASE_DIR / "var" / "folders")])
INDEX_MAX_FILE_BYTES = env_int("INDEX_MAX_FILE_BYTES", 50_000_000)
# Files put into an inbox from the browser; larger ones get 413 before anything is written.
INBOX_UPLOAD_MAX_BYTES = env_int("INBOX_UPLOAD_MAX_BYTES", 25_000_000)
# A link sent to the inbox assistant is fetched (http/https, public addresses only) within these.
URL_FETCH_MAX_BYTES = env_int("URL_FETCH_MAX_BYTES", 5_000_000)
URL_FETCH_TIMEOUT_SECONDS = env_float("URL_FETCH_TIMEOUT_SECONDS", 15.0)
URL_FETCH_MAX_REDIRECTS = env_int("URL_FETCH_MAX_REDIRECTS", 5)
# Tests only (config/test_settings.py's tests switch it on with pytest's settings fixture): a
# fetch may reach 127.0.0.0/8 and ::1. Deliberately not read from the environment.
URL_FETCH_ALLOW_LOOPBACK = False
# OCR of images and scanned PDF pages (Tesseract, in the indexing workers only).
OCR_ENABLED = env_bool("OCR_ENABLED", True)
OCR_LANGUAGES = env_str("OCR_LANGUAGES", "eng")  # Tesseract codes joined by "+", e.g. "eng+deu"
OCR_TIMEOUT_SECONDS = env_int("OCR_TIMEOUT_SECONDS", 60)  # per image or page
OCR_MAX_IMAGE_PIXELS = env_int("OCR_MAX_IMAGE_PIXELS", 60_000_000)  # larger images are skipped
# Voice memos and other audio (wav, mp3, m4a, ogg, flac), decoded by Debian's ffmpeg (`make audio`):
# local (PocketSphinx, offline) | openai (its transcription API; needs OPENAI_API_KEY) | off (skipped).
TRANSCRIPTION_PROVIDER = env_str("TRANSCRIPTION_PROVIDER", "local")
# Longer recordings are skipped with the reason; 0 sizes the limit to the file's time budget
# (apps/library/parsing/audio.py: local transcription's measured speed, the API's upload cap).
TRANSCRIPTION_MAX_SECONDS = env_int("TRANSCRIPTION_MAX_SECONDS", 0)
OPENAI_TRANSCRIPTION_MODEL = env_str("OPENAI_TRANSCRIPTION_MODEL", "whisper-1")
# Audio is billed by the minute, not by tokens: the usage record's cost.
OPENAI_TRANSCRIPTION_USD_PER_MINUTE = env_float("OPENAI_TRANSCRIPTION_USD_PER_MINUTE", 0.006)
# Zip-based documents (docx, xlsx, pptx, ODF, epub) are refused before unpacking past these (zip bombs).
INDEX_MAX_UNPACKED_BYTES = env_int("INDEX_MAX_UNPACKED_BYTES", 200_000_000)
INDEX_MAX_COMPRESSION_RATIO = env_int("INDEX_MAX_COMPRESSION_RATIO", 100)
# HTML pages keep only their main content (trafilatura); false indexes every visible word.
INDEX_HTML_MAIN_CONTENT = env_bool("INDEX_HTML_MAIN_CONTENT", True)
# One file's share of a worker: beyond it the file fails alone ("too large to index in 5 minutes").
INDEX_FILE_TIME_BUDGET_SECONDS = env_float("INDEX_FILE_TIME_BUDGET_SECONDS", 300.0)
# Extracted characters a file may bring, any kind: 0 sizes it to the time budget (budget seconds x
# the rate text is embedded at: 1 M characters in about 40 s on 2 cores with the local model, so
# 20,000 a second leaves room; 300 s -> 6 M characters). More is skipped with the reason.
INDEX_MAX_TEXT_CHARS = env_int("INDEX_MAX_TEXT_CHARS", 0)
INDEX_TEXT_CHARS_PER_SECOND = env_int("INDEX_TEXT_CHARS_PER_SECOND", 20_000)
CHUNK_TOKENS = env_int("CHUNK_TOKENS", 256)
CHUNK_OVERLAP_TOKENS = env_int("CHUNK_OVERLAP_TOKENS", 32)
EMBEDDING_PROVIDER = env_str("EMBEDDING_PROVIDER", "local")  # local | local_torch | openai | hash
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 64)
# The local model's ONNX graph ("" = beside the venv, exported by `make install` or on first use),
# its padded tokens per batch (rows x longest row), and its threads per process: worker
# processes x threads fit the cores (Procfile: --concurrency=${WORKER_CONCURRENCY}).
EMBEDDING_ONNX_PATH = env_str("EMBEDDING_ONNX_PATH", "")
EMBEDDING_BATCH_TOKENS = env_int("EMBEDDING_BATCH_TOKENS", 4096)
WORKER_CONCURRENCY = env_int("WORKER_CONCURRENCY", 2)
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", max(1, (os.cpu_count() or 1) // WORKER_CONCURRENCY))
OPENAI_EMBEDDING_MODEL = env_str("OPENAI_EMBEDDING_MODEL", "text-embedding-3-small")
BACKFILL_BATCH_SIZE = env_int("BACKFILL_BATCH_SIZE", 2000)
# The backfill shrinks its batches to stay near this duration (short locks, short transactions).
BACKFILL_BATCH_TARGET_SECONDS = env_float("BACKFILL_BATCH_TARGET_SECONDS", 0.25)
# Leave chunk search vectors NULL at write time and let the backfill fill them (see bench/README.md).
INDEX_DEFER_SEARCH_VECTOR = env_bool("INDEX_DEFER_SEARCH_VECTOR", False)
FOLDER_SYNC_INTERVAL_SECONDS = env_int("FOLDER_SYNC_INTERVAL_SECONDS", 3600)
# Per user, over the folders they own (each overridable per user in the admin, `UserQuota`);
# unset: no limit. Files past a limit are skipped with the reason and indexed once there is room.
QUOTA_FOLDERS_PER_USER: int | None = env_int("QUOTA_FOLDERS_PER_USER", 0) or None
QUOTA_FILES_PER_USER: int | None = env_int("QUOTA_FILES_PER_USER", 0) or None
QUOTA_BYTES_PER_USER: int | None = env_int("QUOTA_BYTES_PER_USER", 0) or None
QUOTA_CHUNKS_PER_USER: int | None = env_int("QUOTA_CHUNKS_PER_USER", 0) or None
# How long an invitation link to a folder stays valid.
INVITATION_TTL_SECONDS = env_int("INVITATION_TTL_SECONDS", 7 * 24 * 3600)
FOLDER_FULL_PRUNE_INTERVAL_SECONDS = env_int("FOLDER_FULL_PRUNE_INTERVAL_SECONDS", 86400)
# The watcher (`manage.py watch_folders`): a local folder's sync is queued once its files have been
# quiet this long, or this long after its first change while writes keep coming; the set of local
# folders is read again this often.
WATCHER_QUIET_SECONDS = env_float("WATCHER_QUIET_SECONDS", 1.0)
WATCHER_MAX_WAIT_SECONDS = env_float("WATCHER_MAX_WAIT_SECONDS", 5.0)
WATCHER_POLL_SECONDS = env_float("WATCHER_POLL_SECONDS", 3.0)

# --- Google Drive -----------------------------------------------------------------------------
GOOGLE_OAUTH_CLIENT_ID = env_str("GOOGLE_OAUTH_CLIENT_ID")
GOOGLE_OAUTH_CLIENT_SECRET = env_str("GOOGLE_OAUTH_CLIENT_SECRET")
GOOGLE_OAUTH_REDIRECT_URI = env_str("GOOGLE_OAUTH_REDIRECT_URI", "http://127.0.0.1:8000/api/drive/callback")
GOOGLE_SERVICE_ACCOUNT_FILE = env_str("GOOGLE_SERVICE_ACCOUNT_FILE")
# Points the real Google client at the Drive emulator (tests, demos).
DRIVE_API_ENDPOINT = env_str("DRIVE_API_ENDPOINT")
DRIVE_MAX_RETRIES = env_int("DRIVE_MAX_RETRIES", 5)
# GET /api/files/{id}/content on a Drive file: sent whole only up to this size (past it, 413 with its
# Drive link), and no single byte range longer; Drive downloads in flight per web process (past it, 503).
CONTENT_MAX_BYTES = env_int("CONTENT_MAX_BYTES", 100_000_000)
CONTENT_MAX_CONCURRENT = env_int("CONTENT_MAX_CONCURRENT", 4)

# --- Sign in with Google: OpenID Connect through django-allauth's Google provider -------------
# The same OAuth client as Drive. allauth checks the ID token's iss, aud and exp (and its
# signature when it did not come straight from the token endpoint), with PKCE and state on the
# code flow. With DRIVE_API_ENDPOINT set the emulator plays Google's consent page and token
# endpoint, and issues the ID tokens.
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
GOOGLE_SIGN_IN = bool(GOOGLE_OAUTH_CLIENT_ID)
_google_origin = "{0.scheme}://{0.netloc}".format(urlsplit(DRIVE_API_ENDPOINT)) if DRIVE_API_ENDPOINT else ""
SOCIALACCOUNT_PROVIDERS = {
    "google": {
        "APPS": [{"client_id": GOOGLE_OAUTH_CLIENT_ID, "secret": GOOGLE_OAUTH_CLIENT_SECRET}] if GOOGLE_SIGN_IN else [],
        "SCOPE": ["openid", "email", "profile"],
        "OAUTH_PKCE_ENABLED": True,
        **(
            {
                "AUTHORIZE_URL": f"{_google_origin}/o/oauth2/auth",
                "ACCESS_TOKEN_URL": f"{_google_origin}/token",
                "ID_TOKEN_ISSUER": _google_origin,
            }
            if _google_origin
            else {}
        ),
    }
}
ACCOUNT_ADAPTER = "apps.core.accounts.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "apps.web.signup.SocialAccountAdapter"
# A first Google sign-in creates an account only for a Google-verified address at one of these
# domains, or through a valid invitation link opened before signing in; existing accounts always
# sign in. Empty: invitations only.
SIGNUP_ALLOWED_DOMAINS = [domain.lower().lstrip("@") for domain in env_list("SIGNUP_ALLOWED_DOMAINS", [])]
# Only allauth's sign-in pages are mounted: its email management would let anyone type any
# address into their account, and password accounts are the operator's (AccountAdapter).
SOCIALACCOUNT_ONLY = True
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "password1*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
SOCIALACCOUNT_AUTO_SIGNUP = True
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False  # an email claim never logs into an existing password account
SOCIALACCOUNT_STORE_TOKENS = False
LOGIN_REDIRECT_URL = "/"

# --- Search -----------------------------------------------------------------------------------
# Reciprocal-rank fusion constant: plain RRF's 60 (Cormack et al. 2009). A smaller k with a
# feedback round re-ranking the candidates won on the collections it was chosen on and lost on
# others (CACM titles -0.021 nDCG@10 against plain RRF of the same two legs, CISI -0.007); plain
# RRF of the chunks is within 0.004 of that on every collection and +0.007 on their mean
# (bench/search/search_quality.py, 7 collections), so the simpler fusion stays.
SEARCH_RRF_K = env_int("SEARCH_RRF_K", 60)
SEARCH_MAX_QUERY_CHARS = env_int("SEARCH_MAX_QUERY_CHARS", 2000)

# --- LLM providers (per role: router, agent, answer) ------------------------------------------
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
ANTHROPIC_API_KEY = env_str("ANTHROPIC_API_KEY")
ANTHROPIC_BASE_URL = env_str("ANTHROPIC_BASE_URL")
# cache_control on the system prompt and tools (the agent resends both every turn); off for
# Anthropic-compatible servers that reject the field.
ANTHROPIC_PROMPT_CACHE = env_bool("ANTHROPIC_PROMPT_CACHE", True)
# A key (or an OpenAI-compatible base URL) switches to that provider unless one is named.
_DEFAULT_PROVIDER = (
    "anthropic" if ANTHROPIC_API_KEY else "openai" if (OPENAI_API_KEY or OPENAI_BASE_URL) else "extractive"
)
LLM_PROVIDER = env_str("LLM_PROVIDER", _DEFAULT_PROVIDER)  # extractive | openai | anthropic | scripted
_DEFAULT_MODELS = {
    "anthropic": {"router": "claude-3-5-haiku-latest", "agent": "claude-sonnet-4-5", "answer": "claude-sonnet-4-5"},
}.get(LLM_PROVIDER, {"router": "gpt-4o-mini", "agent": "gpt-4o", "answer": "gpt-4o"})
LLM_MODELS = {role: env_str(f"LLM_MODEL_{role.upper()}", model) for role, model in _DEFAULT_MODELS.items()}
# The models a chat request may name (`model`, seed 001's models_allowed) for its run's calls; by
# default only the configured answer and agent models, so nothing new is spent unless allowed.
LLM_MODELS_ALLOWED = env_list("LLM_MODELS_ALLOWED", list(dict.fromkeys([LLM_MODELS["answer"], LLM_MODELS["agent"]])))
LLM_MAX_TOKENS = env_int("LLM_MAX_TOKENS", 1024)
# Per role: the router answers a short JSON object; a summary is a paragraph. An answer cut at its
# limit is marked truncated, and the chat page offers to continue it.
LLM_MAX_TOKENS_ROUTER = env_int("LLM_MAX_TOKENS_ROUTER", 100)
LLM_MAX_TOKENS_AGENT = env_int("LLM_MAX_TOKENS_AGENT", LLM_MAX_TOKENS)
LLM_MAX_TOKENS_ANSWER = env_int("LLM_MAX_TOKENS_ANSWER", LLM_MAX_TOKENS)
LLM_MAX_TOKENS_SUMMARY = env_int("LLM_MAX_TOKENS_SUMMARY", 400)
LLM_TEMPERATURE = env_float("LLM_TEMPERATURE", 0.2)
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 60.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 4)
# The inbox router's model call, before its offline classifier: one try, this long at most.
LLM_ROUTER_TIMEOUT_SECONDS = env_float("LLM_ROUTER_TIMEOUT_SECONDS", 1.5)
# After this many consecutive failed calls a model service is skipped (answers come offline) for
# the cool-down, per process: a dead API does not cost every user a timeout.
LLM_BREAKER_FAILURES = env_int("LLM_BREAKER_FAILURES", 3)
LLM_BREAKER_COOLDOWN_SECONDS = env_float("LLM_BREAKER_COOLDOWN_SECONDS", 30.0)
# Whether the answer model takes images (describe_image): by default OpenAI and Anthropic do, while
# an OpenAI-compatible server (a base URL) is assumed not to unless said.
LLM_VISION = env_bool("LLM_VISION", LLM_PROVIDER == "anthropic" or (LLM_PROVIDER == "openai" and not OPENAI_BASE_URL))
DESCRIBE_IMAGE_MAX_BYTES = env_int("DESCRIBE_IMAGE_MAX_BYTES", 5_000_000)
# USD per million tokens (input, output, cached: prompt-cache reads, cache_write: writes; the last
# two default to the input price). A model's `ModelPrice` row in the admin wins over its entry here;
# the JSON environment variable LLM_PRICES adds or replaces entries.
LLM_PRICES: dict[str, dict[str, float]] = {
    "gpt-4o": {"input": 2.50, "output": 10.00, "cached": 1.25},
    "gpt-4o-mini": {"input": 0.15, "output": 0.60, "cached": 0.075},
    "gpt-4.1": {"input": 2.00, "output": 8.00, "cached": 0.50},
    "gpt-4.1-mini": {"input": 0.40, "output": 1.60, "cached": 0.10},
    "claude-sonnet-4-5": {"input": 3.00, "output": 15.00, "cached": 0.30, "cache_write": 3.75},
    "claude-3-5-haiku-latest": {"input": 0.80, "output": 4.00, "cached": 0.08, "cache_write": 1.00},
    "claude-3-5-haiku": {"input": 0.80, "output": 4.00, "cached": 0.08, "cache_write": 1.00},
    "claude-haiku-4-5": {"input": 1.00, "output": 5.00, "cached": 0.10, "cache_write": 1.25},
} | json.loads(env_str("LLM_PRICES", "{}"))
# Per user (each overridable per user in the admin, `UsageBudget`); unset: no limit. Tokens are
# input + output per UTC day; cost is USD per UTC calendar month. Past either, answers come offline.
LLM_DAILY_TOKENS_PER_USER: int | None = (
    int(env_str("LLM_DAILY_TOKENS_PER_USER")) if env_str("LLM_DAILY_TOKENS_PER_USER") else None
)
LLM_MONTHLY_COST_PER_USER: float | None = (
    float(env_str("LLM_MONTHLY_COST_PER_USER")) if env_str("LLM_MONTHLY_COST_PER_USER") else None
)

# --- Chat -------------------------------------------------------------------------------------
CHAT_SEARCH_K = env_int("CHAT_SEARCH_K", 8)
CHAT_HISTORY_MAX_TOKENS = env_int("CHAT_HISTORY_MAX_TOKENS", 2000)
CHAT_HISTORY_MAX_MESSAGES = env_int("CHAT_HISTORY_MAX_MESSAGES", 12)
# Images a question may carry (multipart `images`), each at most this large: 5 MB is what
# Anthropic takes per image, and four fit in the request body cap (apps/core/body_cap.py).
CHAT_MAX_IMAGES = env_int("CHAT_MAX_IMAGES", 4)
CHAT_IMAGE_MAX_BYTES = env_int("CHAT_IMAGE_MAX_BYTES", 5_000_000)

# --- Inbox and organize -----------------------------------------------------------------------
INBOX_CONVERSATION_WINDOW_MINUTES = env_int("INBOX_CONVERSATION_WINDOW_MINUTES", 30)
ORGANIZE_SUGGESTION_TTL_DAYS = env_int("ORGANIZE_SUGGESTION_TTL_DAYS", 7)

# --- Agent ------------------------------------------------------------------------------------
# Seed 001's master switch: off, a request for agent mode is answered in standard mode, with a notice.
AGENT_MODE_ENABLED = env_bool("AGENT_MODE_ENABLED", True)
# Seed 000's acceptance: an agent answer within 3 tool rounds and 15 s. A request may ask for
# fewer rounds (`max_iterations`), never more.
AGENT_MAX_ITERATIONS = env_int("AGENT_MAX_ITERATIONS", 3)
AGENT_TOTAL_TIMEOUT_SECONDS = env_float("AGENT_TOTAL_TIMEOUT_SECONDS", 15.0)
AGENT_TOOL_TIMEOUT_SECONDS = env_float("AGENT_TOOL_TIMEOUT_SECONDS", 15.0)
# Tool rounds stop this long before the total timeout, so the answer from what was gathered fits.
AGENT_ANSWER_RESERVE_SECONDS = env_float("AGENT_ANSWER_RESERVE_SECONDS", 4.0)
# Passages gathered across searches are deduplicated and cut to this many tokens.
AGENT_CONTEXT_MAX_TOKENS = env_int("AGENT_CONTEXT_MAX_TOKENS", 8000)
WEBHOOK_TOOL_ALLOWED_HOSTS = env_list("WEBHOOK_TOOL_ALLOWED_HOSTS", [])

# --- Events -----------------------------------------------------------------------------------
EVENT_LOG_MAX_EVENTS = env_int("EVENT_LOG_MAX_EVENTS", 2000)
EVENT_LOG_TTL_SECONDS = env_int("EVENT_LOG_TTL_SECONDS", 3600)
SSE_HEARTBEAT_SECONDS = env_float("SSE_HEARTBEAT_SECONDS", 15.0)

# --- MCP (apps/mcp) ---------------------------------------------------------------------------
# Where the site is served, for the document links of `manage.py mcp` (stdio has no request to read
# the host from; over HTTP at /mcp the links use the request's own scheme and host).
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

# --- Traces (OpenTelemetry, apps/core/tracing.py) ---------------------------------------------
# Off unless set; the OTLP/HTTP exporter reads it (and the other OTEL_* variables) itself.
OTEL_EXPORTER_OTLP_ENDPOINT = env_str("OTEL_EXPORTER_OTLP_ENDPOINT")

# --- Metrics (GET /metrics, Prometheus) -------------------------------------------------------
# prometheus_client picks multiprocess mode from the environment when it is first imported, and
# processes started from this one (Celery's children, uvicorn's workers) inherit it: every process
# writes its own files here and a scrape adds them up. `make run` empties it before starting.
PROMETHEUS_MULTIPROC_DIR = env_str("PROMETHEUS_MULTIPROC_DIR", str(BASE_DIR / "var" / "prometheus"))
os.environ["PROMETHEUS_MULTIPROC_DIR"] = PROMETHEUS_MULTIPROC_DIR
# A scraper's `Authorization: Bearer <token>`; unset, only staff sessions may read /metrics.
METRICS_TOKEN = env_str("METRICS_TOKEN")
# Live workers per queue come from a broadcast that waits its whole timeout: asked at most this often.
METRICS_WORKERS_CACHE_SECONDS = env_float("METRICS_WORKERS_CACHE_SECONDS", 30.0)
# A Celery worker's own scrape port (its processes' counters, from its multiprocess directory), for
# deployments where workers do not share the web's directory (a container or pod each); unset: none.
WORKER_METRICS_PORT = env_int("WORKER_METRICS_PORT", 0) or None
WORKER_METRICS_ADDRESS = env_str("WORKER_METRICS_ADDRESS", "0.0.0.0")  # noqa: S104  (scraped from its pod)

# --- Logging ----------------------------------------------------------------------------------
LOG_FORMAT = env_str("LOG_FORMAT", "text" if DEBUG else "json")
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "apps.core.logging.JsonFormatter"},
    },
    "filters": {"redact": {"()": "apps.core.logging.RedactSecretsFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["redact"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # Django's default config gives "django" its own console handler; one line per record is enough.
    "loggers": {
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        # The MCP SDK's transport says "Terminating session: None" after every stateless request (/mcp).
        "mcp.server.streamable_http": {"level": "WARNING"},
    },
}
