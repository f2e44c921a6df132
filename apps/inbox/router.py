"""Stage 1: which intent a message carries, fast (seed 002).

1. Rules: with a suggestion pending, a bare yes/no is confirm/reject; pure data (a lone URL, or
   long text that asks nothing) is save. No model is asked.
2. The router model (`get_llm("router")`) answers JSON `{intent, confidence, params}`, parsed
   defensively; the extractive provider is no model, so its offline classifier answers instead,
   as it does when the model fails or answers nonsense. The model gets one try of at most
   `LLM_ROUTER_TIMEOUT_SECONDS` (no retries): a slow or dead API costs a message that long, no more.
3. Confidence under `MIN_CONFIDENCE` becomes chat (which asks what the user meant), and so do
   confirm/reject when nothing is pending.

Every route carries its latency and how it was decided, stored on the user's message.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from django.conf import settings

from apps.llm.base import LLMError, LLMProvider
from apps.llm.extractive import ExtractiveProvider
from apps.llm.extractive_router import Intent, classify_intent
from apps.llm.factory import get_llm
from apps.llm.failures import failure_kind
from apps.llm.types import Message

logger = logging.getLogger(__name__)

MIN_CONFIDENCE = 0.6
RULE_CONFIDENCE = 0.95
SAVE_CONFIDENCE = 0.9
# Pasted content is long and asks nothing (seed 002: "long text without question marks").
SAVE_MIN_CHARS = 280
# Asked of the provider as JSON mode / structured output; `parse_router_output` still validates.
ROUTER_SCHEMA = {
    "type": "object",
    "properties": {
        "intent": {"type": "string", "enum": [intent.value for intent in Intent]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "params": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["intent", "confidence"],
}
MAX_PARAMS = 8
MAX_PARAM_CHARS = 300
CONTEXT_CHARS = 200
_URL = re.compile(r"^\s*https?://\S+\s*$")
_QUESTION_START = re.compile(
    r"^\s*(what|where|when|which|who|whose|why|how|is|are|do|does|did|can|could|would|should|find|search|"
    r"show|list|get|tell|summari[sz]e|organi[sz]e|move|put|sort|file)\b",
    re.IGNORECASE,
)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)

ROUTER_SYSTEM_PROMPT = "You are an intent classifier for a personal file management system. Respond with JSON only."

ROUTER_PROMPT = """\
## Intents
- query: User wants to FIND files, ASK questions, GET information, or SUMMARIZE content
- organize: User wants to MOVE, ORGANIZE, or SORT files into folders
- save: User is ADDING new data without asking anything (just text, URL, or file)
- confirm: User is saying YES to a pending suggestion (only if pending_action exists)
- reject: User is saying NO to a pending suggestion (only if pending_action exists)
- chat: Greetings, thanks, or completely unclear intent

## Context
Recent conversation:
{context}

Pending action: {pending}

## User Message
{message}

## Output
Respond with JSON only:
{{"intent": "query|organize|save|confirm|reject|chat", "confidence": 0.0-1.0, "params": {{}}}}

For "query" intent, extract search_query if clear.
For "organize" intent, extract target_folder and file_path if mentioned."""


class Method:
    RULE = "rule"
    MODEL = "model"
    OFFLINE = "offline"  # the extractive provider's classifier
    OFFLINE_FALLBACK = "offline_fallback"  # the model failed or answered nonsense


@dataclass(frozen=True)
class Route:
    intent: Intent
    confidence: float
    params: dict[str, str] = field(default_factory=dict)
    method: str = Method.RULE
    latency_ms: float = 0.0
    model: str = ""
    classified_as: str = ""  # the intent before low confidence or a missing pending action demoted it

    def as_metadata(self) -> dict[str, object]:
        data = asdict(self)
        data["intent"] = self.intent.value
        data["latency_ms"] = round(self.latency_ms, 3)
        return data


def route_message(
    *, text: str, pending: str | None = None, context: Sequence[str] = (), llm: LLMProvider | None = None
) -> Route:
    """`pending` describes the suggestion awaiting a yes/no, if any; `context` is the last few turns."""
    started = time.perf_counter()
    route = _classify(text=text, pending=pending, context=context, llm=llm)
    route = _settle(route, has_pending=pending is not None)
    return Route(**{**asdict(route), "latency_ms": (time.perf_counter() - started) * 1000})


def _classify(*, text: str, pending: str | None, context: Sequence[str], llm: LLMProvider | None) -> Route:
    if pending is not None:
        answer = classify_intent(text, has_pending_suggestion=True)
        if answer.intent in (Intent.CONFIRM, Intent.REJECT):
            return Route(intent=answer.intent, confidence=RULE_CONFIDENCE, method=Method.RULE)
    if _URL.match(text):
        return Route(intent=Intent.SAVE, confidence=SAVE_CONFIDENCE, params={"url": text.strip()}, method=Method.RULE)
    if _is_pasted_text(text):
        return Route(intent=Intent.SAVE, confidence=SAVE_CONFIDENCE, method=Method.RULE)
    provider = llm or get_llm("router", timeout_seconds=settings.LLM_ROUTER_TIMEOUT_SECONDS, max_retries=0)
    if isinstance(provider, ExtractiveProvider):
        return _offline(text, pending=pending, method=Method.OFFLINE)
    try:
        response = provider.complete(
            messages=[Message.user(_prompt(text=text, pending=pending, context=context))],
            system=ROUTER_SYSTEM_PROMPT,
            max_tokens=settings.LLM_MAX_TOKENS_ROUTER,
            temperature=0.0,
            json_schema=ROUTER_SCHEMA,
        )
    except LLMError as exc:
        logger.warning("router model failed (%s), classifying offline: %r", failure_kind(exc), exc)
        return _offline(text, pending=pending, method=Method.OFFLINE_FALLBACK)
    parsed = parse_router_output(response.text)
    if parsed is None:
        logger.warning("router model answered no usable JSON, classifying offline: %.200r", response.text)
        return _offline(text, pending=pending, method=Method.OFFLINE_FALLBACK)
    intent, confidence, params = parsed
    return Route(
        intent=intent, confidence=confidence, params=params, method=Method.MODEL, model=response.model or provider.model
    )


def parse_router_output(text: str) -> tuple[Intent, float, dict[str, str]] | None:
    """`{intent, confidence, params}` from a model's answer, or None when there is none to trust.

    Tolerates code fences and prose around the object, intents in any case, confidences as
    strings or percentages; drops params that are not short scalars.
    """
    match = _JSON_OBJECT.search(text or "")
    if match is None:
        return None
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    try:
        intent = Intent(str(data.get("intent", "")).strip().lower())
    except ValueError:
        return None
    return intent, _confidence(data.get("confidence")), _params(data.get("params"))


def _settle(route: Route, *, has_pending: bool) -> Route:
    if route.intent in (Intent.CONFIRM, Intent.REJECT) and not has_pending:
        return Route(**{**asdict(route), "intent": Intent.CHAT, "classified_as": route.intent.value})
    if route.confidence < MIN_CONFIDENCE:
        params = {**route.params, "fallback": "true"}
        return Route(**{**asdict(route), "intent": Intent.CHAT, "params": params, "classified_as": route.intent.value})
    return route


def _offline(text: str, *, pending: str | None, method: str) -> Route:
    result = classify_intent(text, has_pending_suggestion=pending is not None)
    return Route(intent=result.intent, confidence=result.confidence, params=dict(result.params), method=method)


def _is_pasted_text(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) >= SAVE_MIN_CHARS and "?" not in stripped and not _QUESTION_START.match(stripped)


def _prompt(*, text: str, pending: str | None, context: Sequence[str]) -> str:
    recent = "\n".join(f"- {line[:CONTEXT_CHARS]}" for line in context[-3:]) or "(none)"
    # JSON-quoted, so quotes or newlines in the message cannot break out of its place in the prompt.
    return ROUTER_PROMPT.format(context=recent, pending=pending or "none", message=json.dumps(text, ensure_ascii=False))


def _confidence(value: object) -> float:
    try:
        number = float(value.strip().rstrip("%")) if isinstance(value, str) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        # A well-formed intent without a usable confidence is taken at the threshold, not dropped.
        return MIN_CONFIDENCE
    if number != number:  # NaN
        return MIN_CONFIDENCE
    if 1 < number <= 100:
        number /= 100  # a percentage
    return max(0.0, min(1.0, number))


def _params(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    params: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, str | int | float) and not isinstance(item, bool) and str(item).strip():
            params[str(key)[:64]] = str(item).strip()[:MAX_PARAM_CHARS]
        if len(params) >= MAX_PARAMS:
            break
    return params
