"""Calling an operator-defined webhook: a JSON POST to an allow-listed host, bounded in time and size.

The host is checked against `WEBHOOK_TOOL_ALLOWED_HOSTS` on the URL exactly as httpx parses it,
before anything touches the network (no DNS lookup either), and redirects are never followed, so
the only host ever contacted is one on the list. Every failure is a structured result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx
from django.conf import settings

MAX_RESPONSE_BYTES = 64 * 1024
USER_AGENT = "folderchat-agent/1"


class WebhookRefused(Exception):
    """The URL may not be called at all."""


def webhook_url_check(url: str, *, allowed_hosts: Iterable[str] | None = None) -> httpx.URL:
    """The parsed URL, when it is http(s) to an allowed host with no credentials; else WebhookRefused."""
    hosts = settings.WEBHOOK_TOOL_ALLOWED_HOSTS if allowed_hosts is None else allowed_hosts
    allowed = {host.strip().lower().rstrip(".") for host in hosts}
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise WebhookRefused("invalid webhook URL") from exc
    if parsed.scheme not in ("http", "https"):
        raise WebhookRefused("webhook URLs must be http or https")
    if parsed.userinfo:
        raise WebhookRefused("webhook URLs may not carry credentials")
    host = parsed.host.lower().rstrip(".")
    if not host or host not in allowed:
        raise WebhookRefused(f"host {host or '(none)'!r} is not on WEBHOOK_TOOL_ALLOWED_HOSTS")
    return parsed


def webhook_call(
    *,
    url: str,
    payload: Mapping[str, Any],
    timeout_seconds: float,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> dict[str, Any]:
    """`{"status_code", "data"}` on a 2xx answer; otherwise `{"error", ...}`. Never raises."""
    try:
        target = webhook_url_check(url)
    except WebhookRefused as exc:
        return {"error": str(exc)}
    deadline = time.monotonic() + timeout_seconds
    try:
        # trust_env=False: no proxy from the environment gets to see or reroute the call.
        with (
            httpx.Client(timeout=timeout_seconds, follow_redirects=False, trust_env=False) as client,
            client.stream(
                "POST",
                target,
                json=dict(payload),
                headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
            ) as response,
        ):
            body = bytearray()
            for piece in response.iter_bytes():
                body.extend(piece)
                if len(body) > max_bytes:
                    return {
                        "error": f"response larger than {max_bytes // 1024} KB",
                        "status_code": response.status_code,
                    }
                # httpx times each read; a server dripping bytes must still finish in time.
                if time.monotonic() > deadline:
                    return {"error": f"timed out after {timeout_seconds:g} s"}
    except httpx.TimeoutException:
        return {"error": f"timed out after {timeout_seconds:g} s"}
    except httpx.HTTPError as exc:
        return {"error": f"request failed: {type(exc).__name__}"}
    data = _decode(bytes(body), content_type=response.headers.get("content-type", ""))
    if response.is_redirect:
        return {
            "error": "the webhook answered with a redirect, which is not followed",
            "status_code": response.status_code,
        }
    if not response.is_success:
        return {
            "error": f"the webhook answered HTTP {response.status_code}",
            "status_code": response.status_code,
            "data": data,
        }
    return {"status_code": response.status_code, "data": data}


def _decode(body: bytes, *, content_type: str) -> Any:
    text = body.decode("utf-8", errors="replace")
    if "json" in content_type:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return text
