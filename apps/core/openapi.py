"""The OpenAPI schema's shared parts: the error responses every view can give, and list envelopes.

Views declare their successful responses with `extend_schema`; the errors come from the exception
handler, throttles, authentication and URL routing, which no view spells out, so `AutoSchema`
adds them from what the view is: clients (and schema-driven tests) then know every status code a
response can carry and the one error shape behind all of them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from apps.core.api import Pagination

EVENT_STREAM = "text/event-stream"


class ErrorOutputSerializer(serializers.Serializer):
    """What `apps.core.api.exception_handler` answers every error with."""

    detail = serializers.CharField()

    def get_fields(self) -> dict[str, serializers.Field]:
        # Declared as a class attribute, `errors` would hide the serializer's own `errors`.
        errors = serializers.JSONField(required=False, help_text="Per-field problems, when the input was invalid.")
        return {**super().get_fields(), "errors": errors}


PAGINATION_PARAMETERS = [
    OpenApiParameter("limit", OpenApiTypes.INT, description=f"Page size, at most {Pagination.max_limit}."),
    OpenApiParameter("offset", OpenApiTypes.INT, description="How many items to skip."),
]


class _Page(serializers.Serializer):
    """Base of the `paginated` envelopes, which make their GET a list operation."""


@cache  # one class per item serializer: the schema names its component after the class
def paginated(item: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The `Pagination` envelope (count, next, previous, results) around a list of `item`."""
    name = item.__name__.removesuffix("Serializer")
    return type(
        f"Paginated{name}ListSerializer",
        (_Page,),
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item(many=True),
        },
    )


def error_response(description: str) -> OpenApiResponse:
    """An error a view answers with besides the ones `AutoSchema` adds (e.g. 409)."""
    return OpenApiResponse(ErrorOutputSerializer, description=description)


class PersonalTokenScheme(OpenApiAuthenticationExtension):
    """Names `apps.core.token_auth.PersonalTokenAuthentication` in the schema (the event streams
    refer to it as `tokenAuth` too)."""

    target_class = "apps.core.token_auth.PersonalTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token (`fc_...`), from /settings/tokens or POST /api/auth/token; "
            "each reaches only what its scopes allow (read, search, chat, manage).",
        }


class AutoSchema(openapi.AutoSchema):
    def get_operation_id(self) -> str:
        operation_id = str(super().get_operation_id())
        responses = self.get_response_serializers()
        page = responses.get(200) if isinstance(responses, dict) else None
        if self.method == "GET" and isinstance(page, type) and issubclass(page, _Page):
            # Spectacular calls a GET a list only when it answers a bare array; keep `folders_list`.
            return operation_id.removesuffix("_retrieve") + "_list"
        return operation_id

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        error = self.resolve_serializer(ErrorOutputSerializer, "response").ref
        for code, description in self._error_codes():
            responses.setdefault(code, {"content": {"application/json": {"schema": error}}, "description": description})
        if any(renderer.media_type == EVENT_STREAM for renderer in self.view.get_renderers()):
            for code, response in responses.items():
                if code >= "400":
                    # Asked for a stream, an error comes as one SSE `error` event: text, not the JSON object.
                    response["content"][EVENT_STREAM] = {"schema": {"type": "string"}}
        return responses

    def _error_codes(self) -> list[tuple[str, str]]:
        has_body = self._get_request_body() is not None
        has_query = any(parameter["in"] == "query" for parameter in self._get_parameters())
        codes = []
        if has_body or has_query or self.method not in ("GET", "HEAD", "OPTIONS"):
            codes.append(("400", "Invalid input (`errors` says which fields), or a request the service refused."))
        if not all(isinstance(permission, AllowAny) for permission in self.view.get_permissions()):
            codes.append(("401", "No valid credentials: a token (`Authorization: Bearer ...`) or a session."))
            codes.append(
                ("403", "Refused: a token without the scope needed, or a session request without its CSRF token.")
            )
        if "{" in self.path:
            codes.append(("404", "No such object of the caller's: another user's is indistinguishable."))
        if has_body:
            codes.append(("415", "A request body in a media type the endpoint does not read."))
        if self.view.get_throttles():
            codes.append(("429", "Too many requests; `Retry-After` says when to try again."))
        # apps.core.middleware answers any route so when the database is down.
        codes.append(("503", "A backing service is unavailable; `Retry-After` says when to try again."))
        return codes


RUN_EVENTS_PATH = "/api/runs/{run_id}/events"
FOLDER_EVENTS_PATH = "/api/folders/{folder_id}/events"
EVENT_STREAM_PATHS = (RUN_EVENTS_PATH, FOLDER_EVENTS_PATH)


def event_stream_operations(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Declare the run and folder event streams, plain async views (`apps.core.sse`) no serializer describes.

    A drf-spectacular postprocessing hook: it runs once the views' operations are in `result`.
    """
    result["paths"][RUN_EVENTS_PATH] = {
        "get": _event_stream_operation(
            operation_id="runs_events_stream",
            summary="The run's events as server-sent events",
            description=(
                "Every event of the run from the start, or after `Last-Event-ID`, then live until the "
                "terminal `done` or `error` event. Each event's id is its position in the run's log, "
                "so a client that reconnects with the last id it saw misses nothing. Types: `status` "
                "(phase), `tool_call`, `tool_result`, `text_delta` (answer text as the model writes it, "
                "in agent mode and inbox replies too), `text_reset` (text streamed so far belonged to a "
                "turn that went on to call tools, or was a reply whose tool call failed: discard it), "
                "`message` (the saved answer), then `done` or `error`. Step "
                "events (`status`, `tool_call`, `tool_result`, `text_reset`) carry `timestamp` (ISO 8601, "
                "UTC) and `message`, a one-line human account of the step, e.g. "
                "`Calling search_folder (query='w2 wages')`."
            ),
            tag="runs",
            id_parameter={
                "name": "run_id",
                "in": "path",
                "required": True,
                "schema": {"type": "string", "format": "uuid"},
            },
            not_found="No such run of the caller's.",
        )
    }
    result["paths"][FOLDER_EVENTS_PATH] = {
        "get": _event_stream_operation(
            operation_id="folders_events_stream",
            summary="The folder's events as server-sent events",
            description=(
                "The folder's recent events, or those after `Last-Event-ID` (or `?last_event_id=`, e.g. the "
                "`events_after` of GET /api/folders/{id}), then live for as long as the client stays: "
                "`indexing` (work queued: index or retry), `scan` (a listing or sync: added, modified, "
                "deleted, queued), `file` (a file indexed, skipped or failed, with its reason and the "
                "folder's counters), `sync` (a sync's result: added, modified, deleted, moved, or its error), "
                "`folder_error`, `suggestion` (an organize suggestion created), `file_moved` (a move or its "
                "undo, automatic or not), `evaluation.progress` (an evaluation run's `done` of `total` "
                "questions), `evaluation.finished` (its status, metrics and regression). A `: ping` comment keeps "
                "the connection open while nothing happens."
            ),
            tag="folders",
            id_parameter=_path_id("folder_id", {"type": "integer"}),
            not_found="No such folder of the caller's.",
        )
    }
    return result


def _event_stream_operation(
    *, operation_id: str, summary: str, description: str, tag: str, id_parameter: dict[str, Any], not_found: str
) -> dict[str, Any]:
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOutput"}}}
    return {
        "operationId": operation_id,
        "summary": summary,
        "description": description,
        "tags": [tag],
        "parameters": [
            id_parameter,
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "schema": {"type": "string", "pattern": r"^\d+-\d+$"},
                "description": "Resume after this event id (as an EventSource sends it on reconnecting).",
            },
            {
                "name": "last_event_id",
                "in": "query",
                "required": False,
                "schema": {"type": "string"},
                "description": "The same, for clients that cannot set headers.",
            },
        ],
        "security": [{"tokenAuth": []}, {"cookieAuth": []}],
        "responses": {
            "200": {"description": "The event stream.", "content": {EVENT_STREAM: {"schema": {"type": "string"}}}},
            "400": {"description": "A malformed `Last-Event-ID`.", "content": error},
            "401": {"description": "No valid credentials.", "content": error},
            "404": {"description": not_found, "content": error},
            "503": {"description": "A backing service is unavailable.", "content": error},
        },
    }


def _path_id(name: str, schema: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": schema}
