"""Anthropic prompt caching in agent mode: the part of every request that is cached, and what that saves.

The agent resends the same system prompt and tool list on every turn; with `cache_control` on both
(apps/llm/anthropic_provider.py) Anthropic reads them from its cache after the first turn, billed at
a tenth of the input price. This prints the size of that prefix as the real request sends it
(system block plus the built-in tools' JSON, in tokens estimated at 4 characters each, as the agent's
own context budget does) and, for a run of N model turns, input tokens billed with and without caching.
The first turn writes the cache at 1.25 times the price. Anthropic caches only prefixes of at
least 1024 tokens (Sonnet; 2048 for Haiku): the line "cacheable" says whether this one qualifies.

    .venv/bin/python bench/prompt_cache.py [--turns 4]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

CACHE_READ_PRICE = 0.1
CACHE_WRITE_PRICE = 1.25


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=4, help="model turns per run (3 iterations + final answer)")
    args = parser.parse_args()
    import django

    django.setup()
    from apps.chat.agent.context import estimate_tokens
    from apps.chat.agent.prompts import AGENT_SYSTEM_PROMPT, loop_system_prompt
    from apps.chat.agent.tools import BUILTIN_TOOLS
    from apps.llm.anthropic_provider import to_anthropic_tool

    system = loop_system_prompt(base=AGENT_SYSTEM_PROMPT, max_iterations=6)
    tools = json.dumps([to_anthropic_tool(tool.spec()) for tool in BUILTIN_TOOLS])
    prefix = estimate_tokens(system) + estimate_tokens(tools)
    uncached = prefix * args.turns
    cached = prefix * CACHE_WRITE_PRICE + prefix * CACHE_READ_PRICE * (args.turns - 1)
    print(f"cacheable prefix: system {estimate_tokens(system)} + {len(BUILTIN_TOOLS)} tools {estimate_tokens(tools)}")
    print(f"  = {prefix} tokens sent on each of {args.turns} turns; cacheable on Sonnet: {prefix >= 1024}")
    print(f"prefix input billed per run: {uncached} token-equivalents uncached, {cached:.0f} cached")
    print(
        f"saved per run: {uncached - cached:.0f} token-equivalents ({(uncached - cached) / uncached:.0%} of the prefix)"
    )


if __name__ == "__main__":
    main()
