from django.apps import AppConfig


class InboxConfig(AppConfig):
    name = "apps.inbox"
    label = "inbox"

    def ready(self) -> None:
        # Chat and organize sit below the inbox and never import it: the inbox plugs its run mode
        # into chat's runners, its organize agent into organize's digest-complete hook, and its one
        # event stream into core's event bus.
        from apps.chat.models import RunMode
        from apps.chat.services import RUNNERS
        from apps.core.events import EVENT_COPIES
        from apps.inbox.organize_agent import organize_agent_available, organize_file_with_agent
        from apps.inbox.runner import chat_run_inbox
        from apps.inbox.stream import inbox_event_copies
        from apps.organize.services import ORGANIZE_AGENTS, OrganizeAgent

        RUNNERS[RunMode.INBOX] = chat_run_inbox
        if inbox_event_copies not in EVENT_COPIES:
            EVENT_COPIES.append(inbox_event_copies)
        ORGANIZE_AGENTS["inbox"] = OrganizeAgent(
            available=organize_agent_available, organize_file=organize_file_with_agent
        )
