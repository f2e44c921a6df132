"""`GET /metrics`: every process's metrics in Prometheus' text format, plus the Celery queues read
from the broker at scrape time.

A plain Django view, not DRF: its only credentials are a staff session or the scraper's
`Authorization: Bearer <METRICS_TOKEN>`, checked here alone, so no API authentication (tokens of
users) ever applies to it. Anonymous: 401 with `WWW-Authenticate`, so a scraper's misconfiguration
reads as such; a signed-in non-staff user: 403.
"""

from __future__ import annotations

import hmac
import logging
import threading
import time
from collections.abc import Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from apps.core.queue_metrics import queue_consumers, queue_metrics_list

logger = logging.getLogger(__name__)

INSPECT_TIMEOUT_SECONDS = 1.0


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    refused = _refusal(request)
    if refused is not None:
        return refused
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=settings.PROMETHEUS_MULTIPROC_DIR)
    registry.register(QueueCollector())
    # The text format Prometheus asks for (OpenMetrics, or the classic 0.0.4 text by default).
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    response = HttpResponse(encode(registry), content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response


def _refusal(request: HttpRequest) -> HttpResponse | None:
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        expected = settings.METRICS_TOKEN
        if expected and hmac.compare_digest(credentials.strip().encode(), expected.encode()):
            return None
        return _unauthorized("Invalid metrics token." if expected else "No METRICS_TOKEN is set: sign in as staff.")
    if not request.user.is_authenticated:
        return _unauthorized("Sign in as staff, or send Authorization: Bearer <METRICS_TOKEN>.")
    if not request.user.is_staff:
        return JsonResponse({"detail": "Only staff may read the metrics: they cover every user's work."}, status=403)
    return None


def _unauthorized(detail: str) -> JsonResponse:
    response = JsonResponse({"detail": detail}, status=401)
    response["WWW-Authenticate"] = 'Bearer realm="metrics"'
    return response


class QueueCollector(Collector):
    """Each queue's depth, oldest wait and live workers, asked of the broker at scrape time."""

    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily("folderchat_queue_metrics_up", "1 when the broker answered this scrape.")
        try:
            queues = queue_metrics_list(consumers=_consumers_cached())
        except Exception as exc:  # noqa: BLE001 - the other metrics must still be served
            logger.warning("queue metrics unavailable: %s", type(exc).__name__)
            up.add_metric([], 0)
            yield up
            return
        depth = GaugeMetricFamily("folderchat_queue_depth", "Tasks waiting (every priority).", labels=["queue"])
        oldest = GaugeMetricFamily(
            "folderchat_queue_oldest_wait_seconds",
            "How long the oldest waiting task has waited; 0 when none.",
            labels=["queue"],
        )
        workers = GaugeMetricFamily("folderchat_queue_workers", "Live workers consuming the queue.", labels=["queue"])
        for queue in queues:
            depth.add_metric([queue.name], queue.depth)
            oldest.add_metric([queue.name], queue.oldest_wait_seconds or 0.0)
            workers.add_metric([queue.name], len(queue.workers))
        up.add_metric([], 1)
        yield from (depth, oldest, workers, up)


_consumers_lock = threading.Lock()
_consumers_seen: tuple[float, dict[str, list[str]]] | None = None


def _consumers_cached() -> dict[str, list[str]]:
    """Workers answer a broadcast, which waits its whole timeout: asked once per cache period, and
    concurrent scrapes wait for one answer rather than broadcasting again."""
    global _consumers_seen
    with _consumers_lock:
        now = time.monotonic()
        if _consumers_seen is None or now - _consumers_seen[0] >= settings.METRICS_WORKERS_CACHE_SECONDS:
            _consumers_seen = (now, queue_consumers(timeout=INSPECT_TIMEOUT_SECONDS))
        return _consumers_seen[1]
