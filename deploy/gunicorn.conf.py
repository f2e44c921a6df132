"""Gunicorn running uvicorn workers: ASGI is required for the async SSE endpoints."""

import multiprocessing
import os
from pathlib import Path

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = "uvicorn.workers.UvicornWorker"
workers = int(os.environ.get("WEB_CONCURRENCY", max(2, multiprocessing.cpu_count())))
# SSE streams stay open; the heartbeat keeps proxies from closing them, this keeps gunicorn from it.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
graceful_timeout = 20
keepalive = 5
accesslog = "-"
errorlog = "-"
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# The web process pools its database connections (config/settings.py, DB_POOL_MAX_SIZE); only it reads
# this file, so Celery's workers, which must not, never get the pool from here. 8 per process: a pod's
# WEB_CONCURRENCY processes share its 2 CPUs, so one rarely has more requests in flight, and replicas x
# WEB_CONCURRENCY x 8 must stay below PostgreSQL's max_connections with the workers' own (base: 6 x 2 x 8
# = 96 at the HPA's maximum; the prod overlay's 20 x 4 x 8 needs a larger max_connections or PgBouncer).
os.environ.setdefault("DB_POOL_MAX_SIZE", "8")
# Settings' default, set here too so that this master process knows the directory its workers write to.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(Path(__file__).resolve().parent.parent / "var" / "prometheus"))


def child_exit(server: object, worker: object) -> None:
    """A worker that exited stops counting in the live gauges (open event streams) of /metrics."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(getattr(worker, "pid", 0), os.environ["PROMETHEUS_MULTIPROC_DIR"])
