"""Schemathesis over every operation of /api/schema, in-process through the WSGI app.

Each operation gets requests generated from its schema (boundary values of valid input, then
valid and invalid fuzzing), authenticated by a real token. Every request is sent as generated
(its ids are mostly nobody's objects) and, when it names ids, again with the ids of objects the
user owns, so the views' real paths run too. No response may be a 5xx, and every one must
conform to the schema: a documented status code and content type, a body of the documented shape.

Deterministic (fixed seed, derandomized Hypothesis) and bounded per operation, so CI is neither
flaky nor slow.

Not exercised: the SSE streams, which in a test transaction would wait forever for a run whose
thread starts only on commit. `GET /api/runs/{id}/events` is left out (tests/chat/test_sse.py
covers its answers), and a chat post's streamed variant (`?format=sse`) becomes its queued one.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from apps.core.openapi import EVENT_STREAM_PATHS, FOLDER_EVENTS_PATH, RUN_EVENTS_PATH
from tests.support.tokens import api_token

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES_PER_OPERATION = 10

schema = schemathesis.openapi.from_wsgi(
    "/api/schema",
    get_wsgi_application(),
    config=schemathesis.Config.from_dict(
        {
            "seed": 20261121,
            "generation": {"max-examples": EXAMPLES_PER_OPERATION, "deterministic": True},
            # The coverage phase's negative cases (every constraint of every field broken in turn)
            # took the run past a minute; fuzzing still sends invalid input, within the bound.
            "phases": {"coverage": {"generation": {"mode": "positive"}}},
        }
    ),
)


@pytest.fixture(autouse=True)
def _connection_kept_across_requests():
    """As Django's test client does: the WSGI handler's request signals would otherwise close the
    connection that holds the test's transaction, after the first request."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def _with_owned_ids(values: Any, ids: dict[str, str], *, as_int: bool = False) -> Any:
    if not isinstance(values, dict):
        return values
    return {name: (int(ids[name]) if as_int else ids[name]) if name in ids else value for name, value in values.items()}


@pytest.mark.django_db
@schema.exclude(path=list(EVENT_STREAM_PATHS)).parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_schema(case, owned, user):
    from django.core.cache import cache

    def call() -> None:
        cache.clear()  # throttles would otherwise answer 429 before the view reads anything
        # A new one each call: `POST /api/auth/token/revoke` revokes the one it is sent with.
        case.call_and_validate(headers={"Authorization": f"Bearer {api_token(user)}"}, checks=CHECKS)

    if case.query and case.query.get("format") == "sse":
        case.query["format"] = "json"
    call()

    ids = owned.ids_for_path(case.path)
    named = [values for values in (case.path_parameters, case.query, case.body) if isinstance(values, dict)]
    if any(ids.keys() & values.keys() for values in named):
        case.path_parameters = _with_owned_ids(case.path_parameters, ids)
        case.query = _with_owned_ids(case.query, ids)
        # Only the JSON body's numbers stay numbers; a form body carries strings either way.
        case.body = _with_owned_ids(case.body, ids, as_int=case.media_type == "application/json")
        call()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/api/folders",
        "/api/conversations",
        "/api/inbox/conversations",
        "/api/inbox/suggestions",
        "/api/inbox/moves",
        "/api/folders/{folder_id}/files",
        "/api/folders/{folder_id}/sync-log",
    ],
)
def test_a_limit_beyond_bigint_is_capped_not_a_500(path, owned, auth_client):
    """Found while fuzzing: `?limit=` went to PostgreSQL unbounded, and past bigint it was a 500."""
    from apps.core.api import Pagination

    response = auth_client.get(path.format(folder_id=owned.folder.pk), {"limit": 10**20})

    assert response.status_code == 200, response.content[:300]
    assert len(response.json()["results"]) <= Pagination.max_limit


@pytest.mark.parametrize(
    ("path", "id_name"), [(RUN_EVENTS_PATH, "run_id"), (FOLDER_EVENTS_PATH, "folder_id")], ids=["run", "folder"]
)
def test_the_event_streams_are_documented_with_the_statuses_their_views_answer(client, path, id_name):
    response = client.get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    operation = response.json()["paths"][path]["get"]
    assert "text/event-stream" in operation["responses"]["200"]["content"]
    # apps/core/sse.py: a malformed Last-Event-ID, no credentials, someone else's run or folder.
    assert {"400", "401", "404"} <= operation["responses"].keys()
    assert {parameter["name"] for parameter in operation["parameters"]} == {id_name, "Last-Event-ID", "last_event_id"}
