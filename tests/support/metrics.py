"""`GET /metrics` read the way Prometheus reads it: parsed by prometheus_client's own parser."""

from __future__ import annotations

from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

METRICS_TOKEN = "scrape-token-for-tests"


def scrape(client: Client | None = None) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of one scrape by (name, labels); without a client, with the scraper's token
    (the test's `settings.METRICS_TOKEN` must be METRICS_TOKEN)."""
    client = client or Client(headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    response = client.get("/metrics")
    assert response.status_code == 200, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def sample(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    """One sample's value; 0 when the series does not exist yet (a counter nobody has touched)."""
    return samples.get((name, frozenset(labels.items())), 0.0)
