"""The model a request chose for its run (seed 001's `models_allowed`): set where the run executes,
read by `get_llm`, so every model call of the run (answer, agent turns, the tools' own calls) uses
it without the choice being passed down to each.

A context variable, like `usage_context`: model calls handed to a pool are submitted through
`contextvars.copy_context()`, which carries it along.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

_chosen: contextvars.ContextVar[str] = contextvars.ContextVar("llm_model_choice", default="")


def models_allowed() -> list[str]:
    return list(settings.LLM_MODELS_ALLOWED)


def model_allowed(model: str) -> bool:
    return model in settings.LLM_MODELS_ALLOWED


def chosen_model() -> str:
    """The current run's chosen model; empty: each role's configured one."""
    return _chosen.get()


@contextmanager
def model_choice(model: str) -> Iterator[str]:
    """Calls inside use `model`, while it is still allowed: a run queued before the setting
    narrowed, or regenerated from an older one, falls back to the configured models."""
    token = _chosen.set(model if model and model_allowed(model) else "")
    try:
        yield _chosen.get()
    finally:
        _chosen.reset(token)
