"""Hostile JSON into every POST/PUT/PATCH body the OpenAPI schema declares: never a 500.

Hypothesis generates bodies from the schema's property names with hostile values (NUL bytes, huge
numbers, wrong types, nesting) plus arbitrary JSON; bounded to a few examples per endpoint.
"""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from apps.library.models import Folder
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db

EXAMPLES_PER_ENDPOINT = 20


def _schema() -> dict:
    response = Client().get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return json.loads(response.content)


def _operations() -> list[tuple[str, str, list[str]]]:
    import django

    django.setup()
    schema = _schema()
    components = schema.get("components", {}).get("schemas", {})
    found = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in ("post", "put", "patch"):
                continue
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            if "$ref" in body:
                body = components.get(body["$ref"].rsplit("/", 1)[-1], {})
            found.append((method, path, sorted(body.get("properties", {}))))
    return found


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=200),
    st.sampled_from(["\x00", "a\x00b", "../../etc/passwd", "/etc", "' OR 1=1 --", "x" * 5000, "🙂" * 300, "", " "]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)


def _bodies(properties: list[str]):
    keyed = (
        st.dictionaries(st.sampled_from(properties), VALUES, max_size=len(properties)) if properties else st.nothing()
    )
    return st.one_of(keyed, VALUES)


def _url(path: str, owned) -> str:
    ids = owned.ids_for_path(path)
    return re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], path)


try:
    OPERATIONS = _operations()
except Exception:  # noqa: BLE001 - no database at collection time: discover inside the test instead
    OPERATIONS = []


def test_every_body_endpoint_is_fuzzed():
    operations = _operations()
    assert len(operations) >= 10
    assert {path for _, path, _ in operations} == {path for _, path, _ in OPERATIONS}


@pytest.mark.parametrize(("method", "path", "properties"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_hostile_json_bodies_never_500(method, path, properties, owned, user):
    from django.core.cache import cache

    client = APIClient()
    client.force_authenticate(user=user)
    url = _url(path, owned)

    @settings(
        max_examples=EXAMPLES_PER_ENDPOINT,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(body=_bodies(properties))
    def check(body):
        cache.clear()  # throttles would otherwise answer 429 before the view parses anything
        response = getattr(client, method)(url, json.dumps(body), content_type="application/json")
        assert response.status_code < 500, (method, url, body, response.content[:500])

    check()


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"\x00\x01\x02",
        b'{"message": "\\u0000"}',
        b"[]" * 10,
        b'{"a": ' * 200 + b"1" + b"}" * 200,
        "é".encode("latin-1"),
    ],
)
def test_malformed_json_is_a_400(raw, owned, user):
    client = APIClient()
    client.force_authenticate(user=user)
    for url in ("/api/folders", f"/api/folders/{owned.folder.pk}/search", f"/api/folders/{owned.folder.pk}/chat"):
        response = client.post(url, raw, content_type="application/json")
        assert 400 <= response.status_code < 500, (url, raw[:40], response.status_code, response.content[:300])


def test_an_oversized_body_is_refused_with_a_4xx(owned, user, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    client = APIClient()
    client.force_authenticate(user=user)
    body = json.dumps({"message": "x" * 20_000})
    for url in (f"/api/folders/{owned.folder.pk}/chat", f"/api/folders/{owned.folder.pk}/search", "/api/folders"):
        response = client.post(url, body, content_type="application/json")
        assert 400 <= response.status_code < 500, (url, response.status_code, response.content[:300])


def test_nul_bytes_in_text_fields_are_refused_or_stored_safely(owned, user):
    client = APIClient()
    client.force_authenticate(user=user)
    cases = [
        (f"/api/folders/{owned.folder.pk}/chat", {"message": "hi\x00there"}),
        (f"/api/folders/{owned.folder.pk}/search", {"query": "tax\x00es"}),
        ("/api/folders", {"source": "local", "path": "/tmp/\x00etc"}),
        ("/api/inbox/conversations", {"folder_id": owned.folder.pk, "message": "\x00"}),
        (f"/api/inbox/suggestions/{owned.suggestion.pk}/respond", {"action": "choose", "target_folder": "ta\x00xes"}),
    ]
    for url, body in cases:
        response = client.post(url, body, format="json")
        assert response.status_code < 500, (url, response.status_code, response.content[:300])


def test_a_symlink_inside_an_allowed_root_cannot_register_a_folder_outside_it(user, tmp_path, settings):
    allowed = tmp_path / "allowed"
    outside = tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (allowed / "escape").symlink_to(outside, target_is_directory=True)
    settings.LOCAL_FOLDER_ROOTS = [str(allowed)]
    client = APIClient()
    client.force_authenticate(user=user)
    response = client.post("/api/folders", {"source": "local", "path": str(allowed / "escape")}, format="json")
    assert response.status_code == 400, response.content
    assert "detail" in response.json()
    assert not Folder.objects.filter(owner=user).exists()


def test_malformed_sse_resume_ids_are_a_400_not_a_hang(owned, user):
    client = Client(HTTP_AUTHORIZATION=f"Bearer {api_token(user)}")
    for bad in ["x", "-1", "1-", "1-2-3", "99999999999999999999999-0", "1\x00-0", "' OR 1=1", "0-0" + "0" * 500]:
        response = client.get(f"/api/runs/{owned.run.pk}/events", HTTP_LAST_EVENT_ID=bad)
        assert response.status_code == 400, (bad, response.status_code)
