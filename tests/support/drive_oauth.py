"""Walking the Drive OAuth flow against the emulator's consent page, as a browser would."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import requests


def query(url: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlsplit(url).query).items()}


def consent(auth_client) -> dict[str, str]:
    """Start the flow and click Allow on the (emulated) consent page: the callback's parameters."""
    response = auth_client.get("/api/drive/connect")
    assert response.status_code == 200, response.json()
    redirect = requests.get(response.json()["auth_url"], allow_redirects=False, timeout=10)
    assert redirect.status_code == 302
    assert redirect.headers["Location"].startswith("http://testserver/api/drive/callback?")
    return query(redirect.headers["Location"])
