"""The router's model path is bounded: one try of at most LLM_ROUTER_TIMEOUT_SECONDS, then the
offline classifier, through the real SDKs against the wire stub."""

from __future__ import annotations

import time

import pytest

from apps.inbox.router import Method, route_message
from apps.llm.breaker import breakers_reset
from apps.llm.extractive_router import Intent


@pytest.fixture
def router_model(settings, sdk):
    settings.LLM_MAX_RETRIES = 4  # the chat's budget: the router must not use it
    settings.LLM_TIMEOUT_SECONDS = 60.0
    breakers_reset()
    yield sdk
    breakers_reset()


def test_a_slow_router_model_is_cut_off_at_its_bound(router_model, wire_stub, settings):
    assert settings.LLM_ROUTER_TIMEOUT_SECONDS == 1.5  # the default
    # A first call pays the SDK's lazy imports, which are no part of the wait being bounded.
    wire_stub.reply_text('{"intent": "query", "confidence": 0.9}')
    assert route_message(text="where is my W-2?").method == Method.MODEL
    wire_stub.reply_text('{"intent": "organize", "confidence": 0.9}', delay=4)
    started = time.monotonic()

    route = route_message(text="where is my W-2 from last year?")

    assert time.monotonic() - started < 2.5
    assert (route.intent, route.method) == (Intent.QUERY, Method.OFFLINE_FALLBACK)
    assert len(wire_stub.requests) == 2


@pytest.mark.parametrize("status", [503, 429, 401])
def test_a_failing_router_model_is_tried_once(router_model, wire_stub, status):
    wire_stub.fail(status, times=5, retry_after=0)

    route = route_message(text="where is my W-2 from last year?")

    assert route.method == Method.OFFLINE_FALLBACK and route.intent is Intent.QUERY
    assert len(wire_stub.requests) == 1
