"""A local HTTP server speaking the OpenAI and Anthropic wire formats, for tests of the real SDKs.

Point the SDKs at it (`openai_base_url`, `anthropic_base_url`), queue what it should answer, in
order, whichever API asks (`reply_text`, `reply_tool_calls`, `fail`, `cut_stream`), then assert on
`requests`: every body it received, parsed. Both plain JSON and `stream: true` SSE are served.

Given a `dialect` (`tests.support.llm_wire_dialects`), the OpenAI side answers as that local
server does (Ollama, llama-server, vLLM): its refusals, where its usage goes, how its tool calls
come. Without one it answers as OpenAI does.

Given `count_tokens`, the Anthropic side bills prompt caching as Anthropic does: the request's
prefix (tools, then system, then messages) up to each `cache_control` breakpoint, when it reaches
`cache_min_tokens`, is written to the stub's cache the first time it is seen
(`cache_creation_input_tokens`) and read after (`cache_read_input_tokens`), also by a later
request whose breakpoint lies up to 20 blocks further; `input_tokens` is the rest. Token counts
are whatever `count_tokens` says of the blocks' JSON text.
"""

from __future__ import annotations

import email.policy
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tests.support.llm_wire_dialects import Dialect, DialectFormat
from tests.support.llm_wire_replies import (
    AnthropicFormat,
    OpenAIFormat,
    StubFault,
    StubReply,
    StubStep,
    StubStreamCut,
    StubToolCall,
    error_type,
)

OPENAI_PATH = "/v1/chat/completions"
OPENAI_EMBEDDINGS_PATH = "/v1/embeddings"
OPENAI_TRANSCRIPTIONS_PATH = "/v1/audio/transcriptions"
ANTHROPIC_PATH = "/v1/messages"


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class LLMWireStub:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        count_tokens: Callable[[str], int] | None = None,
        cache_min_tokens: int = 1024,
        dialect: Dialect | None = None,
    ) -> None:
        self.host = host
        self.dialect = dialect
        self.count_tokens = count_tokens
        self.cache_min_tokens = cache_min_tokens
        self._cached_prefixes: set[str] = set()
        self.billed: list[dict[str, int]] = []  # the usage reported for each Anthropic reply, with count_tokens
        self.requests: list[RecordedRequest] = []
        self.text_sent: list[float] = []  # monotonic times at which text chunks were written
        self.streams_ended: list[float] = []  # ... the last event of each stream
        self._steps: deque[StubStep] = deque()
        # Answers to transcription requests, in order: segments (start, end, text), or an error status.
        self._transcripts: deque[list[tuple[float, float, str]] | int] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> LLMWireStub:
        stub = self

        class Handler(_Handler):
            wire_stub = stub

        # daemon_threads (the default here): a handler still sleeping out a timeout test never
        # holds up shutdown.
        self._server = ThreadingHTTPServer((self.host, 0), Handler)
        # A short poll interval keeps shutdown, once per test, from costing half a second.
        threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="llm-wire-stub",
            daemon=True,
        ).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "use the stub inside its `with` block"
        return f"http://{self.host}:{self._server.server_address[1]}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    def settings_for(self, api: Literal["openai", "anthropic"]) -> dict[str, Any]:
        """Settings (also usable as environment, once str()-ed) that make `get_llm` call this stub.

        `override_settings(**stub.settings_for("openai"))` in-process; a worker subprocess gets them
        in its environment and reaches the stub over loopback just the same.
        """
        prefix = api.upper()
        base_url = self.openai_base_url if api == "openai" else self.anthropic_base_url
        return {
            "LLM_PROVIDER": api,
            f"{prefix}_API_KEY": "test-key",
            f"{prefix}_BASE_URL": base_url,
            "LLM_MAX_RETRIES": 1,
        }

    def configure(self, settings: Any, api: Literal["openai", "anthropic"]) -> None:
        """Point pytest-django's ``settings`` at this stub for ``api`` (`settings_for`, in-process)."""
        for name, value in self.settings_for(api).items():
            setattr(settings, name, value)

    # -- scripting -----------------------------------------------------------------------------
    def queue(self, *steps: StubStep) -> None:
        with self._lock:
            self._steps.extend(steps)

    def reply_text(self, text: str, **options: Any) -> None:
        self.queue(StubReply(text=text, **options))

    def reply_tool_calls(self, *calls: StubToolCall, text: str = "", **options: Any) -> None:
        self.queue(StubReply(text=text, tool_calls=calls, **options))

    def fail(self, status: int, *, times: int = 1, retry_after: float | None = None) -> None:
        self.queue(*[StubFault(status=status, retry_after=retry_after)] * times)

    def cut_stream(self, *chunks: str, error_type: str = "overloaded_error") -> None:
        self.queue(StubStreamCut(chunks=chunks, error_type=error_type))

    def reply_transcript(self, segments: list[tuple[float, float, str]] | int) -> None:
        """The next transcription request's segments (start and end seconds, text), or its error status."""
        with self._lock:
            self._transcripts.append(segments)

    @property
    def pending(self) -> int:
        return len(self._steps)

    def _next(self, request: RecordedRequest) -> StubStep | None:
        with self._lock:
            self.requests.append(request)
            step = self._steps.popleft() if self._steps else None
            if isinstance(step, StubReply) and self.count_tokens is not None and request.path == ANTHROPIC_PATH:
                billed = self._billed(request.body, self.count_tokens)
                self.billed.append(billed)
                step = replace(step, **billed)
            return step

    def _billed(self, body: dict[str, Any], count: Callable[[str], int]) -> dict[str, int]:
        """Input tokens split as Anthropic bills them: cache write, cache read, the rest.

        The request is a sequence of blocks (tools, system blocks, message content blocks); a
        prefix is cached when it ends at a breakpoint, and a breakpoint also finds a prefix cached
        by an earlier request at any of the 20 block boundaries before it. A block's own
        `cache_control` is no part of its content.
        """
        system = body.get("system") or []
        blocks = [
            *(body.get("tools") or []),
            *([{"type": "text", "text": system}] if isinstance(system, str) else system),
        ]
        for message in body.get("messages") or []:
            content = message["content"]
            blocks += [{"type": "text", "text": content}] if isinstance(content, str) else content
        plain = [{key: value for key, value in block.items() if key != "cache_control"} for block in blocks]
        marks = [end for end, block in enumerate(blocks, start=1) if "cache_control" in block]
        tokens = {end: count(json.dumps(plain[:end])) for mark in marks for end in range(max(1, mark - 20), mark + 1)}
        read = max((tokens[end] for end in tokens if json.dumps(plain[:end]) in self._cached_prefixes), default=0)
        eligible = [end for end in marks if tokens[end] >= self.cache_min_tokens]
        written = max(0, max((tokens[end] for end in eligible), default=0) - read)
        self._cached_prefixes.update(json.dumps(plain[:end]) for end in eligible)
        return {
            "input_tokens": max(0, count(json.dumps(plain)) - read - written),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }


class _Handler(BaseHTTPRequestHandler):
    wire_stub: LLMWireStub

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: pytest shows failures, not access logs."""

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == OPENAI_TRANSCRIPTIONS_PATH:
            self._transcription(raw)
            return
        body = json.loads(raw or b"{}")
        request = RecordedRequest(path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body)
        if self.path == OPENAI_EMBEDDINGS_PATH:
            self.wire_stub.requests.append(request)
            self._json(200, _embeddings(body))
            return
        if self.path not in (OPENAI_PATH, ANTHROPIC_PATH):
            self._json(404, {"error": {"message": f"stub has no route {self.path}"}})
            return
        dialect = self.wire_stub.dialect if self.path == OPENAI_PATH else None
        refusal = dialect.refusal(body) if dialect is not None else None
        if refusal is not None:  # refused before any scripted reply is used
            with self.wire_stub._lock:
                self.wire_stub.requests.append(request)
            self._json(*refusal)
            return
        step = self.wire_stub._next(request)
        api: OpenAIFormat | AnthropicFormat = AnthropicFormat()
        if self.path == OPENAI_PATH:
            api = DialectFormat(dialect, body) if dialect is not None else OpenAIFormat()
        try:
            if step is None:
                self._json(500, api.error(500, "api_error", "llm wire stub: no scripted reply left"))
            elif isinstance(step, StubFault):
                headers = {"retry-after": f"{step.retry_after:g}"} if step.retry_after is not None else {}
                self._json(step.status, api.error(step.status, error_type(step.status), step.message), headers)
            elif isinstance(step, StubStreamCut):
                self._sse(api.cut_stream(step))
            else:
                time.sleep(step.delay)
                if body.get("stream"):
                    self._sse(_paced(api.stream(step, body), step, self.wire_stub))
                else:
                    self._json(200, api.complete(step))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (a timeout test); nothing left to tell it

    def _transcription(self, raw: bytes) -> None:
        """OpenAI's audio transcription: a multipart form in, verbose_json out."""
        form = _form_fields(self.headers.get("Content-Type", ""), raw)
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.wire_stub._lock:
            self.wire_stub.requests.append(RecordedRequest(path=self.path, headers=headers, body=form))
            answer = self.wire_stub._transcripts.popleft() if self.wire_stub._transcripts else 500
        if isinstance(answer, int):
            self._json(answer, OpenAIFormat().error(answer, error_type(answer), "llm wire stub: transcription failed"))
        else:
            self._json(200, _verbose_transcript(answer))

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: Iterator[str]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(event.encode())
            self.wfile.flush()
        self.close_connection = True


def _paced(events: Iterator[str], reply: StubReply, stub: LLMWireStub) -> Iterator[str]:
    """The events with the reply's generation delays: the opening event at once, like a server
    that sends its headers and first frame before the model's first token. Records when each
    text chunk went out, and when the stream ended (`time.monotonic()`), to measure how long
    they take to reach a client."""
    for index, event in enumerate(events):
        if index == 1:
            time.sleep(reply.first_chunk_delay)
        elif index > 1:
            time.sleep(reply.chunk_delay)
        yield event
        if _TEXT_EVENT.search(event):
            stub.text_sent.append(time.monotonic())
    stub.streams_ended.append(time.monotonic())


# An OpenAI chunk with non-empty content, or an Anthropic text delta.
_TEXT_EVENT = re.compile(r'"content": "[^"]|"type": "text_delta"')


def _embeddings(body: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's embeddings answer: a vector per input (the same text, the same vector) and the
    usage, one prompt token per word."""
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    dimensions = int(body.get("dimensions") or 384)
    data = []
    for index, text in enumerate(texts):
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        vector = [((seed >> (position % 56)) % 997) / 997 - 0.5 for position in range(dimensions)]
        data.append({"object": "embedding", "index": index, "embedding": vector})
    tokens = sum(len(text.split()) for text in texts)
    return {
        "object": "list",
        "data": data,
        "model": body.get("model", "stub-embedding"),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _form_fields(content_type: str, raw: bytes) -> dict[str, Any]:
    """A multipart form's fields: text values as strings, a file as its name, type and bytes; a
    repeated field (``timestamp_granularities[]``) as a list."""
    message = BytesParser(policy=email.policy.HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        filename = part.get_filename()
        value: Any = {"filename": filename, "content_type": part.get_content_type(), "data": payload}
        if filename is None:
            value = payload.decode()
        if name in fields:
            fields[name] = [*(fields[name] if isinstance(fields[name], list) else [fields[name]]), value]
        else:
            fields[name] = value
    return fields


def _verbose_transcript(segments: list[tuple[float, float, str]]) -> dict[str, Any]:
    duration = max((end for _, end, _ in segments), default=0.0)
    return {
        "task": "transcribe",
        "language": "english",
        "duration": duration,
        "text": " ".join(text for _, _, text in segments),
        "segments": [
            {"id": index, "seek": 0, "start": start, "end": end, "text": text, "tokens": [], "temperature": 0.0}
            | {"avg_logprob": -0.2, "compression_ratio": 1.3, "no_speech_prob": 0.01}
            for index, (start, end, text) in enumerate(segments)
        ],
        "usage": {"type": "duration", "seconds": duration},
    }
