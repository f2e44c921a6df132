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
# Settings' default, set here too so that this master process knows the directory its workers write to.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(Path(__file__).resolve().parent.parent / "var" / "prometheus"))


def child_exit(server: object, worker: object) -> None:
    """A worker that exited stops counting in the live gauges (open event streams) of /metrics."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(getattr(worker, "pid", 0), os.environ["PROMETHEUS_MULTIPROC_DIR"])
