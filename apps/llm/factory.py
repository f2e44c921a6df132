"""`get_llm(role)`: the provider configured for a role (router, agent, answer), with the model a
run's request chose (`apps.llm.model_choice`) in place of the role's own.

Network providers of one service (provider and base URL) share a circuit breaker (`apps.llm.breaker`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured

from apps.llm.anthropic_provider import AnthropicProvider
from apps.llm.base import LLMProvider, RetryPolicy
from apps.llm.breaker import breaker_for
from apps.llm.extractive import ExtractiveProvider
from apps.llm.model_choice import chosen_model
from apps.llm.openai_provider import OpenAIProvider
from apps.llm.scripted import ScriptedProvider

ROLES = ("router", "agent", "answer")
PROVIDERS = ("extractive", "openai", "anthropic", "scripted")

# LLM_PROVIDER=scripted hands out this one instance, so a test can script it without reaching into
# the code under test. Tests that want their own instance use `use_provider_for_tests`.
SHARED_SCRIPTED = ScriptedProvider()

_overrides: dict[str | None, LLMProvider] = {}


@dataclass(frozen=True)
class ProviderConfig:
    provider: str
    model: str
    api_key: str = ""
    base_url: str = ""
    timeout_seconds: float = 60.0
    max_retries: int = 4
    max_tokens: int = 1024
    temperature: float = 0.2
    prompt_cache: bool = True  # Anthropic's cache_control on the system prompt and tools
    breaker_failures: int = 3
    breaker_cooldown_seconds: float = 30.0


def get_llm(role: str, *, timeout_seconds: float | None = None, max_retries: int | None = None) -> LLMProvider:
    """`timeout_seconds` / `max_retries` bound a call tighter than the settings do (the inbox router)."""
    override = _overrides.get(role) or _overrides.get(None)
    if override is not None:
        return override
    config = provider_config(role=role, settings=django_settings)
    if chosen_model():  # the run's request named its model (`model_choice`): every role uses it
        config = dataclasses.replace(config, model=chosen_model())
    if timeout_seconds is not None:
        config = dataclasses.replace(config, timeout_seconds=min(timeout_seconds, config.timeout_seconds))
    if max_retries is not None:
        config = dataclasses.replace(config, max_retries=max_retries)
    return build_provider(config)


def get_model(role: str) -> LLMProvider | None:
    """The role's provider when it is a model; None offline (the extractive provider), where a
    caller that needs a model's own words takes its offline way instead."""
    llm = get_llm(role)
    return None if isinstance(llm, ExtractiveProvider) else llm


def provider_config(*, role: str, settings: Any) -> ProviderConfig:
    if role not in ROLES:
        raise ValueError(f"unknown LLM role {role!r}; expected one of {ROLES}")
    provider = settings.LLM_PROVIDER
    if provider not in PROVIDERS:
        raise ImproperlyConfigured(f"LLM_PROVIDER={provider!r}; expected one of {PROVIDERS}")
    prefix = provider.upper()  # OPENAI_API_KEY, ANTHROPIC_BASE_URL, ...
    return ProviderConfig(
        provider=provider,
        model=settings.LLM_MODELS[role],
        api_key=getattr(settings, f"{prefix}_API_KEY", "") or "",
        base_url=getattr(settings, f"{prefix}_BASE_URL", "") or "",
        timeout_seconds=settings.LLM_TIMEOUT_SECONDS,
        max_retries=settings.LLM_MAX_RETRIES,
        # LLM_MAX_TOKENS_ROUTER, _AGENT, _ANSWER; LLM_MAX_TOKENS where one is not set.
        max_tokens=getattr(settings, f"LLM_MAX_TOKENS_{role.upper()}", settings.LLM_MAX_TOKENS),
        temperature=settings.LLM_TEMPERATURE,
        prompt_cache=getattr(settings, "ANTHROPIC_PROMPT_CACHE", True),
        breaker_failures=getattr(settings, "LLM_BREAKER_FAILURES", 3),
        breaker_cooldown_seconds=getattr(settings, "LLM_BREAKER_COOLDOWN_SECONDS", 30.0),
    )


@functools.cache
def build_provider(config: ProviderConfig) -> LLMProvider:
    """Cached per configuration: SDK clients hold connection pools worth reusing across calls."""
    if config.provider == "extractive":
        return ExtractiveProvider()
    if config.provider == "scripted":
        return SHARED_SCRIPTED
    if not config.api_key and not config.base_url:
        raise ImproperlyConfigured(f"LLM_PROVIDER={config.provider} needs its API key or base URL set")
    network_options: dict[str, Any] = {
        "model": config.model,
        # Compatible servers (Ollama, vLLM) ignore the key, but the SDKs refuse to start without one.
        "api_key": config.api_key or "unused",
        "base_url": config.base_url or None,
        "timeout_seconds": config.timeout_seconds,
        "retry_policy": RetryPolicy(max_attempts=config.max_retries + 1),
        "breaker": breaker_for(
            service=f"{config.provider} {config.base_url or 'default'}",
            failures=config.breaker_failures,
            cooldown_seconds=config.breaker_cooldown_seconds,
        ),
        "max_tokens": config.max_tokens,
        "temperature": config.temperature,
    }
    if config.provider == "openai":
        return OpenAIProvider(**network_options)
    return AnthropicProvider(**network_options, prompt_cache=config.prompt_cache)


@contextmanager
def use_provider_for_tests(provider: LLMProvider, *, role: str | None = None) -> Iterator[LLMProvider]:
    """Make `get_llm` return `provider` for one role, or every role when `role` is None."""
    previous = _overrides.get(role)
    _overrides[role] = provider
    try:
        yield provider
    finally:
        if previous is None:
            _overrides.pop(role, None)
        else:
            _overrides[role] = previous
