from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Literal

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from apps.llm.anthropic_provider import AnthropicProvider
from apps.llm.extractive import ExtractiveProvider
from apps.llm.factory import (
    SHARED_SCRIPTED,
    ProviderConfig,
    build_provider,
    get_llm,
    get_model,
    provider_config,
    use_provider_for_tests,
)
from apps.llm.openai_provider import OpenAIProvider
from apps.llm.scripted import ScriptedProvider
from apps.llm.types import Message
from tests.support.llm_wire_stub import LLMWireStub


def _settings(**overrides: Any) -> SimpleNamespace:
    values = {
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-x",
        "OPENAI_BASE_URL": "",
        "ANTHROPIC_API_KEY": "ak-y",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "LLM_MODELS": {"router": "small", "agent": "big", "answer": "mid"},
        "LLM_MAX_TOKENS": 512,
        "LLM_TEMPERATURE": 0.1,
        "LLM_TIMEOUT_SECONDS": 12.0,
        "LLM_MAX_RETRIES": 2,
    }
    return SimpleNamespace(**{**values, **overrides})


def test_config_reads_the_role_model_and_the_providers_own_key():
    config = provider_config(role="agent", settings=_settings(LLM_PROVIDER="anthropic"))

    assert config == ProviderConfig(
        provider="anthropic",
        model="big",
        api_key="ak-y",
        base_url="http://127.0.0.1:9",
        timeout_seconds=12.0,
        max_retries=2,
        max_tokens=512,
        temperature=0.1,
    )


def test_built_providers_carry_the_configuration():
    openai_provider = build_provider(provider_config(role="router", settings=_settings()))
    anthropic_provider = build_provider(provider_config(role="answer", settings=_settings(LLM_PROVIDER="anthropic")))

    assert isinstance(openai_provider, OpenAIProvider)
    assert openai_provider.model == "small"
    assert openai_provider.retry_policy.max_attempts == 3  # one try plus LLM_MAX_RETRIES
    assert isinstance(anthropic_provider, AnthropicProvider)
    assert (anthropic_provider.model, anthropic_provider.max_tokens) == ("mid", 512)


def test_providers_are_reused_per_configuration():
    config = provider_config(role="agent", settings=_settings())

    assert build_provider(config) is build_provider(config)
    assert build_provider(config) is not build_provider(provider_config(role="router", settings=_settings()))


def test_offline_providers_need_no_keys():
    extractive = build_provider(provider_config(role="answer", settings=_settings(LLM_PROVIDER="extractive")))
    scripted = build_provider(provider_config(role="answer", settings=_settings(LLM_PROVIDER="scripted")))

    assert isinstance(extractive, ExtractiveProvider)
    assert scripted is SHARED_SCRIPTED


def test_compatible_server_needs_only_a_base_url():
    settings = _settings(OPENAI_API_KEY="", OPENAI_BASE_URL="http://127.0.0.1:11434/v1")

    assert isinstance(build_provider(provider_config(role="agent", settings=settings)), OpenAIProvider)


def test_missing_key_and_unknown_names_are_configuration_errors():
    with pytest.raises(ImproperlyConfigured):
        build_provider(provider_config(role="agent", settings=_settings(OPENAI_API_KEY="")))
    with pytest.raises(ImproperlyConfigured):
        provider_config(role="agent", settings=_settings(LLM_PROVIDER="gemini"))
    with pytest.raises(ValueError, match="unknown LLM role"):
        provider_config(role="poet", settings=_settings())


def test_override_applies_to_every_role_and_is_restored():
    everywhere = ScriptedProvider()
    router_only = ScriptedProvider()

    with use_provider_for_tests(everywhere):
        with use_provider_for_tests(router_only, role="router"):
            assert get_llm("router") is router_only
            assert get_llm("agent") is everywhere
        assert get_llm("router") is everywhere
        with use_provider_for_tests(ScriptedProvider()):
            pass
        assert get_llm("agent") is everywhere  # the nested override put the outer one back


def test_get_model_is_the_provider_unless_it_is_the_offline_one():
    model = ScriptedProvider()
    with use_provider_for_tests(ExtractiveProvider()):
        assert get_model("answer") is None
        with use_provider_for_tests(model, role="router"):
            assert get_model("router") is model
            assert get_model("agent") is None


@pytest.mark.skipif(not settings.configured, reason="needs Django settings (pytest-django)")
def test_get_llm_reads_django_settings():
    from django.test import override_settings

    with override_settings(LLM_PROVIDER="extractive"):
        assert isinstance(get_llm("answer"), ExtractiveProvider)
    with override_settings(LLM_PROVIDER="openai", OPENAI_API_KEY="sk-z", OPENAI_BASE_URL=""):
        provider = get_llm("router")
        assert isinstance(provider, OpenAIProvider)
        assert provider.model == settings.LLM_MODELS["router"]


@pytest.mark.skipif(not settings.configured, reason="needs Django settings (pytest-django)")
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_get_llm_reaches_the_wire_stub_through_settings(
    llm_wire_stub: LLMWireStub, api: Literal["openai", "anthropic"]
):
    from django.test import override_settings

    llm_wire_stub.reply_text("Through the factory.")

    with override_settings(**llm_wire_stub.settings_for(api)):
        response = get_llm("answer").complete(messages=[Message.user("hi")])

    assert response.text == "Through the factory."
    assert llm_wire_stub.requests[0].body["model"] == settings.LLM_MODELS["answer"]
