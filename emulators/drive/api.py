"""The Drive v3 endpoints the emulator serves, as plain functions of (state, request) -> reply.

Paths are those the client builds from the static discovery document: it replaces rootUrl +
servicePath (``https://www.googleapis.com/drive/v3/``) with ``api_endpoint`` wholesale, so the
emulator's api_endpoint is ``http://host:port/drive/v3/``.
"""

from __future__ import annotations

import base64
import email.parser
import hashlib
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

from werkzeug.http import parse_range_header

from apps.connectors.drive import mimes
from apps.connectors.drive.client import OAUTH_AUTHORIZE_PATH, OAUTH_REFRESH_PATH
from emulators.drive.errors import ApiError, bad_request
from emulators.drive.identity import id_token_sign
from emulators.drive.query import apply_mask, parse_fields, parse_query
from emulators.drive.state import DriveState, OAuthGrant

API_PREFIX = "/drive/v3"
# Media uploads go to the same origin under this prefix (the client keeps its path, not its host).
UPLOAD_PREFIX = "/upload/drive/v3"
JSON = "application/json; charset=UTF-8"

# What Drive returns when no ``fields`` parameter is given: a deliberately thin file resource.
_DEFAULT_FILE = "kind,id,name,mimeType"
_DEFAULT_FIELDS = {
    "files.list": f"kind,incompleteSearch,nextPageToken,files({_DEFAULT_FILE})",
    "files.get": _DEFAULT_FILE,
    "drives.list": "kind,nextPageToken,drives(kind,id,name)",
    "files.create": _DEFAULT_FILE,
    "files.update": _DEFAULT_FILE,
    "permissions.list": "kind,nextPageToken,permissions(id,type,role,emailAddress)",
    "changes.list": (
        "kind,nextPageToken,newStartPageToken,"
        f"changes(kind,changeType,time,removed,fileId,driveId,file({_DEFAULT_FILE}))"
    ),
}

_access_tokens = itertools.count(1)
_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, str]
    body: bytes = b""
    content_type: str = ""
    origin: str = ""  # the emulator's own http://host:port (the issuer of its ID tokens)
    range: str = ""  # the Range header, honoured by downloads (alt=media) as Drive does


@dataclass
class Reply:
    body: bytes
    content_type: str = JSON
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


def handle(state: DriveState, request: Request) -> Reply:
    endpoint, file_id, view = _route(request)
    file_ids = {file_id} if file_id else set()
    if endpoint == "files.list":
        file_ids |= parse_query(request.params.get("q", "")).parent_ids
    state.begin_call(endpoint, file_ids)
    return view(state, request, file_id or "")


def _route(request: Request) -> tuple[str, str | None, _View]:
    if request.method == "POST" and request.path == OAUTH_REFRESH_PATH:
        return "oauth.token", None, _token
    # The consent page consents at once and redirects back with a code for OAUTH_REFRESH_PATH.
    if request.method == "GET" and request.path == OAUTH_AUTHORIZE_PATH:
        return "oauth.authorize", None, _authorize
    if request.path.startswith(UPLOAD_PREFIX):
        path = request.path.removeprefix(UPLOAD_PREFIX)
        for method, pattern, endpoint, view in _UPLOAD_ROUTES:
            match = re.fullmatch(pattern, path)
            if match and method == request.method:
                return endpoint, match.groupdict().get("id"), view
    path = request.path.removeprefix(API_PREFIX)
    if path == request.path:
        raise ApiError(404, "notFound", f"No such endpoint: {request.path}")
    for method, pattern, endpoint, view in _ROUTES:
        match = re.fullmatch(pattern, path)
        if match and method == request.method:
            file_id = match.groupdict().get("id")
            if endpoint == "files.get" and request.params.get("alt") == "media":
                return "files.download", file_id, _download
            return endpoint, file_id, view
    raise ApiError(404, "notFound", f"No such endpoint: {request.method} {request.path}")


def _flag(request: Request, name: str) -> bool:
    return request.params.get(name, "false").lower() == "true"


def _all_drives(request: Request) -> bool:
    return _flag(request, "supportsAllDrives") and _flag(request, "includeItemsFromAllDrives")


def _json(endpoint: str, request: Request, payload: dict[str, Any]) -> Reply:
    mask = parse_fields(request.params.get("fields") or _DEFAULT_FIELDS[endpoint])
    return Reply(body=json.dumps(apply_mask(payload, mask)).encode())


def _int_param(request: Request, name: str, default: int, *, maximum: int) -> int:
    raw = request.params.get(name) or str(default)
    if not raw.isdigit():
        raise bad_request(f"Invalid value for {name}: {raw}", reason="invalid")
    return max(1, min(int(raw), maximum))


def _list_files(state: DriveState, request: Request, _: str) -> Reply:
    query = parse_query(request.params.get("q", ""))
    all_drives = _all_drives(request)
    for parent_id in query.parent_ids:
        state.item(parent_id, all_drives=all_drives)  # Drive answers 404 for an unknown parent
    drive_id = request.params.get("driveId") if request.params.get("corpora") == "drive" else None
    found = state.search(query.predicate, all_drives=all_drives, drive_id=drive_id)
    if request.params.get("orderBy") in ("name", "folder,name"):
        found.sort(key=lambda resource: (resource["name"].casefold(), resource["id"]))
    page_size = _int_param(request, "pageSize", 100, maximum=1000)
    offset = _int_param(request, "pageToken", 1, maximum=len(found) + 1) - 1
    payload: dict[str, Any] = {
        "kind": "drive#fileList",
        "incompleteSearch": False,
        "files": found[offset : offset + page_size],
    }
    if offset + page_size < len(found):
        payload["nextPageToken"] = str(offset + page_size + 1)
    return _json("files.list", request, payload)


def _list_drives(state: DriveState, request: Request, _: str) -> Reply:
    drives = state.shared_drives()
    page_size = _int_param(request, "pageSize", 10, maximum=100)
    offset = _int_param(request, "pageToken", 1, maximum=len(drives) + 1) - 1
    payload: dict[str, Any] = {"kind": "drive#driveList", "drives": drives[offset : offset + page_size]}
    if offset + page_size < len(drives):
        payload["nextPageToken"] = str(offset + page_size + 1)
    return _json("drives.list", request, payload)


def _get_file(state: DriveState, request: Request, file_id: str) -> Reply:
    item = state.item(file_id, all_drives=_flag(request, "supportsAllDrives"))
    return _json("files.get", request, state.resource(item))


def _download(state: DriveState, request: Request, file_id: str) -> Reply:
    item = state.item(file_id, all_drives=_flag(request, "supportsAllDrives"))
    if mimes.is_google_native(item.mime_type):
        raise ApiError(
            403,
            "fileNotDownloadable",
            "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
        )
    size = len(item.content)
    requested = parse_range_header(request.range) if request.range else None
    if requested is None or requested.units != "bytes" or len(requested.ranges) != 1:
        state.record_media(file_id, request.range, size)
        return Reply(body=item.content, content_type=item.mime_type)
    bounds = requested.range_for_length(size)
    if bounds is None:
        raise ApiError(416, "requestedRangeNotSatisfiable", "Request range not satisfiable")
    start, end = bounds
    state.record_media(file_id, request.range, end - start)
    reply = Reply(body=item.content[start:end], content_type=item.mime_type, status=206)
    reply.headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
    return reply


def _export(state: DriveState, request: Request, file_id: str) -> Reply:
    item = state.item(file_id, all_drives=True)  # files.export takes no supportsAllDrives
    mime_type = request.params.get("mimeType", "")
    if not mimes.is_google_native(item.mime_type) or not item.exports:
        raise ApiError(403, "fileNotExportable", "Export only supports Docs Editors files.")
    if mime_type not in item.exports:
        raise bad_request("The requested conversion is not supported.")
    return Reply(body=item.exports[mime_type], content_type=mime_type)


def _body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        raise bad_request("Invalid JSON payload received.", reason="parseError") from None
    if not isinstance(body, dict):
        raise bad_request("Invalid JSON payload received.", reason="parseError")
    return body


def _id_list(request: Request, name: str) -> list[str]:
    return [value for value in request.params.get(name, "").split(",") if value]


def _update_file(state: DriveState, request: Request, file_id: str) -> Reply:
    state.item(file_id, all_drives=_flag(request, "supportsAllDrives"))
    name = _body(request).get("name")
    item = state.update(
        file_id,
        name=name if isinstance(name, str) else None,
        add_parents=_id_list(request, "addParents"),
        remove_parents=_id_list(request, "removeParents"),
    )
    return _json("files.update", request, state.resource(item))


def _create_file(state: DriveState, request: Request, _: str) -> Reply:
    body = _body(request)
    parents = body.get("parents") or [DriveState.MY_DRIVE_ID]
    if not isinstance(body.get("name"), str) or len(parents) != 1:
        raise bad_request("A file needs a name and exactly one parent.")
    state.item(parents[0], all_drives=_flag(request, "supportsAllDrives"))
    item = state.create(
        name=body["name"],
        mime_type=body.get("mimeType", "application/octet-stream"),
        parent_id=parents[0],
    )
    return _json("files.create", request, state.resource(item))


def _upload_parts(request: Request) -> tuple[dict[str, Any], bytes]:
    """(metadata, content) of a media upload: ``media`` is the bytes alone, ``multipart`` a
    multipart/related body with the JSON metadata first and the bytes second."""
    kind = request.params.get("uploadType")
    if kind == "media":
        return {}, request.body
    if kind != "multipart":
        raise bad_request(f"Unsupported uploadType: {kind!r}.", reason="badContent")
    header = f"Content-Type: {request.content_type}\r\n\r\n".encode()
    message = email.parser.BytesParser().parsebytes(header + request.body)
    parts: list[bytes] = []
    for part in message.walk():
        payload = None if part.is_multipart() else part.get_payload(decode=True)
        if isinstance(payload, bytes):
            parts.append(payload)
    if len(parts) != 2:
        raise bad_request("A multipart upload has a metadata part and a media part.", reason="badContent")
    metadata, content = json.loads(parts[0] or b"{}"), parts[1]
    if not isinstance(metadata, dict):
        raise bad_request("Invalid multipart upload.", reason="badContent")
    return metadata, content


def _upload_create(state: DriveState, request: Request, _: str) -> Reply:
    metadata, content = _upload_parts(request)
    parents = metadata.get("parents") or [DriveState.MY_DRIVE_ID]
    if not isinstance(metadata.get("name"), str) or len(parents) != 1:
        raise bad_request("A file needs a name and exactly one parent.")
    state.item(parents[0], all_drives=_flag(request, "supportsAllDrives"))
    mime_type = metadata.get("mimeType") or "application/octet-stream"
    file_id = state.add_file(metadata["name"], content, parent_id=parents[0], mime_type=mime_type)
    return _json("files.create", request, state.resource(state.item(file_id, all_drives=True)))


def _upload_update(state: DriveState, request: Request, file_id: str) -> Reply:
    state.item(file_id, all_drives=_flag(request, "supportsAllDrives"))
    _, content = _upload_parts(request)
    state.edit(file_id, content)
    return _json("files.update", request, state.resource(state.item(file_id, all_drives=True)))


def _list_permissions(state: DriveState, request: Request, file_id: str) -> Reply:
    item = state.item(file_id, all_drives=_flag(request, "supportsAllDrives"))
    payload = {"kind": "drive#permissionList", "permissions": state.permissions.listed(state, item.id)}
    return _json("permissions.list", request, payload)


def _start_page_token(state: DriveState, request: Request, _: str) -> Reply:
    payload = {"kind": "drive#startPageToken", "startPageToken": state.start_page_token()}
    return Reply(body=json.dumps(payload).encode())


def _list_changes(state: DriveState, request: Request, _: str) -> Reply:
    token = request.params.get("pageToken")
    if not token:
        raise ApiError(400, "required", "Required parameter: pageToken")
    changes, next_token, new_start = state.changes(
        token,
        page_size=_int_param(request, "pageSize", 100, maximum=1000),
        drive_id=request.params.get("driveId"),
        all_drives=_all_drives(request),
    )
    payload: dict[str, Any] = {"kind": "drive#changeList", "changes": changes}
    if next_token:
        payload["nextPageToken"] = next_token
    if new_start:
        payload["newStartPageToken"] = new_start
    return _json("changes.list", request, payload)


def _authorize(state: DriveState, request: Request, _: str) -> Reply:
    """The consent page of the web flow (PKCE required), answered as if the user clicked Allow."""
    params = request.params
    if params.get("response_type") != "code" or params.get("code_challenge_method") != "S256":
        raise bad_request("response_type=code and code_challenge_method=S256 are required.")
    if not params.get("redirect_uri") or not params.get("code_challenge"):
        raise bad_request("redirect_uri and code_challenge are required.")
    code = state.issue_auth_code(
        OAuthGrant(
            challenge=params["code_challenge"],
            redirect_uri=params["redirect_uri"],
            scope=params.get("scope", ""),
            client_id=params.get("client_id", ""),
            nonce=params.get("nonce", ""),
        )
    )
    separator = "&" if "?" in params["redirect_uri"] else "?"
    query = urlencode({"code": code, "state": params.get("state", "")})
    return Reply(body=b"", status=302, headers={"Location": f"{params['redirect_uri']}{separator}{query}"})


def _code_exchange(state: DriveState, form: dict[str, str]) -> Reply:
    """authorization_code grant: a one-time code, its PKCE verifier and the same redirect_uri."""
    grant = state.redeem_auth_code(form.get("code", ""))
    verifier = form.get("code_verifier", "")
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    if grant is None or challenge != grant.challenge or form.get("redirect_uri") != grant.redirect_uri:
        error = {"error": "invalid_grant", "error_description": "Bad Request"}
        return Reply(body=json.dumps(error).encode(), status=400)
    number = next(_access_tokens)
    token = {
        "access_token": f"emu-access-{number}",
        "refresh_token": f"emu-refresh-{number}",
        "expires_in": 3599,
        "scope": grant.scope,
        "token_type": "Bearer",
    }
    if "openid" in grant.scope.split():
        token["id_token"] = id_token_sign(state, grant=grant, issuer=form.get("_issuer", ""))
    return Reply(body=json.dumps(token).encode())


def _token(state: DriveState, request: Request, _: str) -> Reply:
    """OAuth refresh: any refresh token works unless the test revoked it."""
    form = {key: values[-1] for key, values in parse_qs(request.body.decode()).items()}
    if form.get("grant_type") == "authorization_code":
        return _code_exchange(state, {**form, "_issuer": request.origin})
    if form.get("grant_type") == _JWT_BEARER and form.get("assertion"):
        # A service account's signed assertion: accepted unchecked, the emulator knows no keys.
        token = {"access_token": f"emu-access-{next(_access_tokens)}", "expires_in": 3599, "token_type": "Bearer"}
        return Reply(body=json.dumps(token).encode())
    if form.get("grant_type") != "refresh_token" or form.get("refresh_token") in state.revoked_refresh_tokens:
        error = {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
        return Reply(body=json.dumps(error).encode(), status=400)
    token = {"access_token": f"emu-access-{next(_access_tokens)}", "expires_in": 3599, "token_type": "Bearer"}
    return Reply(body=json.dumps(token).encode())


_View = Callable[[DriveState, Request, str], Reply]

_ROUTES: list[tuple[str, str, str, _View]] = [
    ("GET", r"/files", "files.list", _list_files),
    ("POST", r"/files", "files.create", _create_file),
    ("GET", r"/files/(?P<id>[^/]+)/export", "files.export", _export),
    ("GET", r"/files/(?P<id>[^/]+)/permissions", "permissions.list", _list_permissions),
    ("GET", r"/files/(?P<id>[^/]+)", "files.get", _get_file),
    ("PATCH", r"/files/(?P<id>[^/]+)", "files.update", _update_file),
    ("GET", r"/changes/startPageToken", "changes.getStartPageToken", _start_page_token),
    ("GET", r"/changes", "changes.list", _list_changes),
    ("GET", r"/drives", "drives.list", _list_drives),
]
_UPLOAD_ROUTES: list[tuple[str, str, str, _View]] = [
    ("POST", r"/files", "files.create", _upload_create),
    ("PATCH", r"/files/(?P<id>[^/]+)", "files.update", _upload_update),
]
