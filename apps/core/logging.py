"""Structured logs, with secrets scrubbed before anything is written."""

from __future__ import annotations

import json
import logging
import re

_SECRET_PATTERNS = [
    re.compile(r"(ya29\.)[\w\-.]+"),  # Google OAuth access tokens
    re.compile(r"(1//)[\w\-.]+"),  # Google refresh tokens
    re.compile(r"((?:access|refresh)_token['\"]?\s*[:=]\s*['\"]?)[^'\"\s,&}]+", re.IGNORECASE),
    re.compile(r"((?:client_secret|api_key|password)['\"]?\s*[:=]\s*['\"]?)[^'\"\s,&}]+", re.IGNORECASE),
    re.compile(r"(Bearer\s+)[\w\-.~+/=]+", re.IGNORECASE),
    re.compile(r"(sk-)[\w\-]{8,}"),
]


def redact(text: str) -> str:
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(r"\1[REDACTED]", text)
    return text


class RedactSecretsFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            payload["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(payload)
