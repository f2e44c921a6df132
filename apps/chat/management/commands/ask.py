"""`manage.py ask FOLDER_ID "question" [--agent] [--conversation ID]`: a chat run in this process."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.chat import selectors
from apps.chat.serializers import MAX_MESSAGE_CHARS
from apps.chat.services import chat_start, run_execute
from apps.core.api import ApplicationError
from apps.core.events import Event
from apps.library.models import Folder


class Command(BaseCommand):
    help = "Ask a folder a question as its owner: the answer streams here, its sources follow."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder_id", type=int)
        parser.add_argument("question")
        parser.add_argument("--agent", action="store_true", help="agent mode: the model chooses its tools")
        parser.add_argument("--conversation", type=int, help="continue this conversation")

    def handle(self, *args: Any, **options: Any) -> None:
        question = options["question"].strip()
        if not question or len(question) > MAX_MESSAGE_CHARS:
            raise CommandError(f"The question must have 1 to {MAX_MESSAGE_CHARS} characters.")
        folder = Folder.objects.select_related("owner").filter(pk=options["folder_id"]).first()
        if folder is None:
            raise CommandError(f"No folder {options['folder_id']}.")
        conversation = None
        if options["conversation"] is not None:
            conversation = selectors.conversation_get(user=folder.owner, conversation_id=options["conversation"])
            if conversation is None or conversation.folder_id != folder.pk:
                raise CommandError(f"No conversation {options['conversation']} in folder {folder.pk}.")
        try:
            run = chat_start(
                user=folder.owner, folder=folder, text=question, conversation=conversation, agent_mode=options["agent"]
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        printer = _Printer(self)
        run = run_execute(run_id=run.pk, on_event=printer)
        printer.finish()
        self.stderr.write(f"conversation {run.conversation_id} · run {run.pk} · {run.status}")
        if run.status != "completed":
            raise CommandError("The run did not complete.")


class _Printer:
    """Answer text on stdout as it streams; progress and errors on stderr."""

    def __init__(self, command: BaseCommand) -> None:
        self._out = command.stdout
        self._err = command.stderr
        self._citations: list[dict[str, Any]] = []

    def __call__(self, event: Event) -> None:
        data = event.data
        if event.type == "text_delta":
            self._out.write(data["text"], ending="")
            self._out.flush()
        elif event.type == "status":
            shown = {key: value for key, value in data.items() if key not in ("phase", "timestamp", "message")}
            details = ", ".join(f"{key}={value}" for key, value in shown.items())
            self._err.write(f"[{data['phase']}{': ' + details if details else ''}]")
        elif event.type == "tool_call":
            # Agent steps (issue 7): what each tool was asked, then what it found.
            tool_input = json.dumps(data.get("tool_input", {}), ensure_ascii=False, default=str)
            self._err.write(f"[tool_call {data.get('tool_name', '')} {tool_input}]")
        elif event.type == "tool_result":
            timing = f" {data['duration_ms']} ms" if data.get("duration_ms") is not None else ""
            outcome = f"{data.get('status', '')}{timing}: {data.get('tool_output', '')}"
            self._err.write(f"[tool_result {data.get('tool_name', '')} {outcome}]")
        elif event.type == "message":
            self._citations = list(data.get("citations", []))
        elif event.type == "error":
            self._err.write(f"\nerror: {data.get('message', '')}")

    def finish(self) -> None:
        self._out.write("")
        if not self._citations:
            return
        self._out.write("\nSources:")
        for citation in self._citations:
            location = f" ({citation['location']})" if citation.get("location") else ""
            self._out.write(f"  [{citation['n']}] {citation['path']}{location}")
