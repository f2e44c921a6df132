"""Settings for the test suite: the same real services, isolated and fast."""

import atexit
import os
import shutil
import tempfile

from config.settings import *  # noqa: F403
from config.settings import BASE_DIR, CACHES, LOGGING, REDIS_URL

# Each test session uses its own Redis database so its queues never mix with a running
# `make run` stack or another session's; each pytest-xdist worker (gw0, gw1, ...) the next one,
# as pytest-django gives each its own PostgreSQL database. Processes a test starts (Celery
# workers, uvicorn) inherit PYTEST_XDIST_WORKER, so they land in their worker's database too.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_REDIS_DB = int(os.environ.get("TEST_REDIS_DB", "1")) + (int(_XDIST_WORKER[2:]) if _XDIST_WORKER[2:].isdigit() else 0)
REDIS_URL = f"{REDIS_URL.rsplit('/', 1)[0]}/{_REDIS_DB}"
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
# Keys of this session only: another session's counts (same user ids, same database) never leak in.
CACHES = {**CACHES, "shared": {**CACHES["shared"], "LOCATION": REDIS_URL, "KEY_PREFIX": f"test-{os.getpid()}"}}
# Metrics of this session (each xdist worker its own) only, never a running stack's or another
# session's: the processes it starts inherit the directory through the environment.
_METRICS_KEY = f"TEST_PROMETHEUS_MULTIPROC_DIR_{_XDIST_WORKER}"
if not os.environ.get(_METRICS_KEY):
    (BASE_DIR / "var").mkdir(exist_ok=True)
    os.environ[_METRICS_KEY] = tempfile.mkdtemp(prefix="test-metrics-", dir=BASE_DIR / "var")
    atexit.register(shutil.rmtree, os.environ[_METRICS_KEY], True)
PROMETHEUS_MULTIPROC_DIR = os.environ["PROMETHEUS_MULTIPROC_DIR"] = os.environ[_METRICS_KEY]
# Unit tests use the hash embedder and deterministic providers; tests that need the local
# model ask for it explicitly.
EMBEDDING_PROVIDER = os.environ.get("EMBEDDING_PROVIDER", "hash")
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Like `make run` (see its Makefile target): plain HTTP on loopback with DEBUG off, so no Secure
# cookies, and logs as text lines.
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
LOGGING["handlers"]["console"]["formatter"] = "text"
# A clean clone has run no collectstatic: WhiteNoise serves the apps' static files where they are.
WHITENOISE_USE_FINDERS = True
