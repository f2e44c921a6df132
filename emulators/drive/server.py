"""A local Google Drive v3 emulator: the real ``googleapiclient`` talks to it over HTTP.

Start a ``DriveEmulator`` (a context manager), fill its ``state`` programmatically or with
``seed_from_directory``, and build the service with ``api_endpoint=emulator.api_endpoint`` and
anonymous credentials (or OAuth credentials whose ``token_uri`` is ``emulator.token_uri``).
"""

from __future__ import annotations

import logging
import mimetypes
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import parse_qs, unquote, urlsplit

from apps.connectors.drive import mimes
from apps.connectors.drive.client import OAUTH_REFRESH_PATH
from emulators.drive.api import API_PREFIX, Reply, Request, handle
from emulators.drive.errors import ApiError
from emulators.drive.state import DriveState

logger = logging.getLogger(__name__)

# Seeded files named like these become Google-native files with the given export renderings.
_NATIVE_SUFFIXES: dict[str, tuple[str, tuple[str, ...]]] = {
    ".gdoc.md": (mimes.DOCUMENT, ("text/markdown", "text/plain")),
    ".gsheet.csv": (mimes.SPREADSHEET, ("text/csv",)),
    ".gslides.txt": (mimes.PRESENTATION, ("text/plain",)),
    ".gsheet.xlsx": (mimes.SPREADSHEET, (mimes.XLSX,)),
    ".gslides.pptx": (mimes.PRESENTATION, (mimes.PPTX,)),
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: DriveState) -> None:
        super().__init__(address, _Handler)
        self.state = state


class _Handler(BaseHTTPRequestHandler):
    # Keep-alive: httplib2 reuses connections, and a TCP handshake per call would dominate.
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes; with Nagle on, delayed ACKs add ~40 ms to each.
    disable_nagle_algorithm = True
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: object) -> None:
        """Silent: a line per request would swamp test output and benchmarks."""

    def _serve(self) -> None:
        url = urlsplit(self.path)
        params = {key: values[-1] for key, values in parse_qs(url.query, keep_blank_values=True).items()}
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        host, port = self.server.server_address[:2]
        origin = f"http://{host!s}:{port}"
        request = Request(
            method=self.command,
            path=unquote(url.path),
            params=params,
            body=body,
            content_type=self.headers.get("Content-Type", ""),
            origin=origin,
            range=self.headers.get("Range", ""),
        )
        try:
            reply = handle(self.server.state, request)
        except ApiError as error:
            reply = Reply(body=error.body(), status=error.status)
            if error.retry_after is not None:
                reply.headers["Retry-After"] = f"{error.retry_after:g}"
        except Exception:
            logger.exception("Drive emulator failed on %s %s", self.command, url.path)
            reply = Reply(body=ApiError(500, "internalError", "Internal Error").body(), status=500)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)


class DriveEmulator:
    """The HTTP server around a ``DriveState``; port 0 picks a free port."""

    def __init__(self, *, state: DriveState | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.state = state or DriveState()
        self._server = _Server((host, port), self.state)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_endpoint(self) -> str:
        """The value for ``client_options={"api_endpoint": ...}`` and ``DRIVE_API_ENDPOINT``."""
        return f"{self.url}{API_PREFIX}/"

    @property
    def token_uri(self) -> str:
        """An OAuth token endpoint that refreshes any token not in ``state.revoked_refresh_tokens``."""
        return f"{self.url}{OAUTH_REFRESH_PATH}"

    def start(self) -> DriveEmulator:
        # A short poll interval keeps stop() (one per test) from waiting half a second.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="drive-emulator",
            daemon=True,
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> DriveEmulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def seed_from_directory(
    state: DriveState,
    directory: Path,
    *,
    parent_id: str = DriveState.MY_DRIVE_ID,
) -> str:
    """Copy a directory tree into the emulator as a folder of the same name; returns its id.

    ``report.gdoc.md`` becomes the Google Doc ``report``, ``budget.gsheet.csv`` the Sheet
    ``budget`` and ``deck.gslides.txt`` the Slides ``deck`` (``.gsheet.xlsx`` and ``.gslides.pptx``
    seed the Office renderings instead); anything else is a plain file.
    """
    folder_id = state.add_folder(directory.name, parent_id=parent_id)
    for path in sorted(directory.iterdir()):
        if path.name.startswith("."):  # .DS_Store, .git: not part of anyone's Drive
            continue
        if path.is_dir():
            seed_from_directory(state, path, parent_id=folder_id)
            continue
        content = path.read_bytes()
        native = next((suffix for suffix in _NATIVE_SUFFIXES if path.name.endswith(suffix)), None)
        if native is None:
            mime_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            state.add_file(path.name, content, parent_id=folder_id, mime_type=mime_type)
        else:
            mime_type, export_types = _NATIVE_SUFFIXES[native]
            state.add_google_file(
                path.name.removesuffix(native),
                parent_id=folder_id,
                mime_type=mime_type,
                exports={export_type: content for export_type in export_types},
            )
    return folder_id
