"""The offline intent classifier for the inbox router: keyword and pattern rules, no model.

It returns raw confidences; turning low confidence into `chat` is the router's decision (002).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import NamedTuple


class Intent(StrEnum):
    QUERY = "query"
    ORGANIZE = "organize"
    SAVE = "save"
    CONFIRM = "confirm"
    REJECT = "reject"
    CHAT = "chat"


class IntentResult(NamedTuple):
    intent: Intent
    confidence: float
    params: dict[str, str]


_AFFIRMATIVE_PHRASE = (
    r"(yes|yep|yeah|yup|sure|ok|okay|fine|confirm(ed)?|accept(ed)?|approve(d)?|agreed?|correct|"
    r"do it|go (ahead|for it)|sounds good|looks good|lgtm|perfect|great|move it|👍)"
)
_NEGATIVE_PHRASE = (
    r"(no|nope|nah|cancel|reject(ed)?|decline|don'?t|do not|stop|skip( it)?|never ?mind|"
    r"keep it( here| there| where it is)?|leave it( here| there| alone| where it is)?|not (now|there)|👎)"
)
_POLITE = r"(please|thanks|thank you)"


def _reply_of(phrase: str) -> re.Pattern[str]:
    """A reply made only of such phrases, politeness aside ("ok, do it", "no, keep it here thanks").

    Anything more ("no, where is my tax return?") is a new request, not an answer to the suggestion.
    """
    separator = r"[\s,.!]+"
    return re.compile(rf"({_POLITE}{separator})?{phrase}({separator}({phrase}|{_POLITE}))*")


_AFFIRMATIVE = _reply_of(_AFFIRMATIVE_PHRASE)
_NEGATIVE = _reply_of(_NEGATIVE_PHRASE)
_GREETING = re.compile(
    r"(hi|hello|hey|yo|good (morning|afternoon|evening)|thanks|thank you|thx|cheers|bye|goodbye|"
    r"how are you|who are you|what can you do|help)( there)?"
)
_ORGANIZE = re.compile(
    r"\b(organi[sz]e|move|sort|tidy|clean up|file (it|this|that|them)|put (it|this|that|them)|"
    r"categori[sz]e|archive|relocate|where should (it|this|that|i put))\b"
)
_TARGET = re.compile(r"\b(?:in|into|to|under)\s+(?:the\s+|my\s+)?(?P<target>[\w ./-]+?)(?:\s+folder)?\s*[.?!]?$")
_QUERY = re.compile(
    r"^(what|where|when|which|who|whose|why|how|is|are|do|does|did|can|could|find|search|look( for| up)?|"
    r"show|list|get|tell|summari[sz]e|explain|compare|give|fetch|open|count)\b"
)
_QUERY_LEAD = re.compile(
    r"^(please\s+)?(find|search( for)?|look( for| up)?|show( me)?|get( me)?|fetch|list|tell me( about)?|"
    r"give me)\s+",
    re.IGNORECASE,
)
_URL = re.compile(r"^https?://\S+$")
# Pasted content is long and asks nothing; 002 routes it straight to save.
_SAVE_MIN_CHARS = 200


def classify_intent(message: str, *, has_pending_suggestion: bool) -> IntentResult:
    text = " ".join(message.split())
    lowered = text.lower()
    bare = lowered.rstrip(".!?, ")
    if not bare:
        return IntentResult(Intent.CHAT, 0.5, {})
    if has_pending_suggestion and _AFFIRMATIVE.fullmatch(bare):
        return IntentResult(Intent.CONFIRM, 0.95, {})
    if has_pending_suggestion and _NEGATIVE.fullmatch(bare):
        return IntentResult(Intent.REJECT, 0.95, {})
    if _URL.match(text):
        return IntentResult(Intent.SAVE, 0.9, {"url": text})
    if _GREETING.fullmatch(bare) or _AFFIRMATIVE.fullmatch(bare) or _NEGATIVE.fullmatch(bare):
        return IntentResult(Intent.CHAT, 0.9, {})
    if len(text) >= _SAVE_MIN_CHARS and "?" not in text and not _QUERY.match(lowered):
        return IntentResult(Intent.SAVE, 0.85, {})
    if _ORGANIZE.search(lowered):
        target = _TARGET.search(lowered)
        params = {"target_hint": target.group("target").strip()} if target else {}
        return IntentResult(Intent.ORGANIZE, 0.85, params)
    if "?" in text or _QUERY.match(lowered):
        return IntentResult(Intent.QUERY, 0.85, {"search_query": _search_query(text)})
    if len(bare.split()) >= 3:
        # Most of what people type into a folder chat is a question, even without a question mark.
        return IntentResult(Intent.QUERY, 0.6, {"search_query": _search_query(text)})
    return IntentResult(Intent.CHAT, 0.4, {})


def _search_query(text: str) -> str:
    return _QUERY_LEAD.sub("", text.strip().rstrip("?!. "), count=1) or text
