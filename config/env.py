"""Reading configuration from the environment, with the embedded services as the fallback.

`make services` writes ``var/services.env``; settings read it only for keys the environment does
not set, and never start anything themselves.
"""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# SERVICES_ENV_FILE="" ignores the embedded services altogether, as a deployment would (the tests
# against separately started servers set it).
SERVICES_ENV = Path(os.environ.get("SERVICES_ENV_FILE", BASE_DIR / "var" / "services.env"))


def _services_env() -> dict[str, str]:
    if not SERVICES_ENV.name or not SERVICES_ENV.is_file():
        return {}
    values = {}
    for line in SERVICES_ENV.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.startswith("#"):
            values[key.strip()] = value.strip()
    return values


_EMBEDDED = _services_env()


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name) or _EMBEDDED.get(name) or default


def env_int(name: str, default: int) -> int:
    raw = env_str(name)
    return int(raw) if raw else default


def env_float(name: str, default: float) -> float:
    raw = env_str(name)
    return float(raw) if raw else default


def env_bool(name: str, default: bool) -> bool:
    raw = env_str(name)
    return raw.lower() in {"1", "true", "yes", "on"} if raw else default


def env_list(name: str, default: list[str]) -> list[str]:
    raw = env_str(name)
    return [item.strip() for item in raw.split(",") if item.strip()] if raw else default
