"""Agent mode: the model chooses tools in a bounded loop (`loop.agent_loop_run`).

`runner.chat_run_agent` is the folder-chat runner; other agents (inbox query, organize) build
their own `registry.ToolRegistry` and system prompt and call the same loop.
"""
