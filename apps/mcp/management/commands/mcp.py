"""`manage.py mcp --user NAME`: the MCP server over stdio, for a desktop client that starts it.

It acts as that user with every scope (whoever can run manage.py can read the database anyway),
writing in the language they chose on their account page; document links point at SITE_URL. Logs
go to stderr: stdout carries the protocol.
"""

from __future__ import annotations

from typing import Any

import anyio
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections

from apps.core.preferences import answer_language
from apps.mcp.server import mcp_server
from apps.mcp.types import Caller


class Command(BaseCommand):
    help = "Serve the MCP tools (list_folders, search, ask, read_document) over stdio as one user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the username the tools act as")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"], is_active=True).first()
        if user is None:
            raise CommandError(f"No active user named {options['user']!r}.")
        # The user's language as the server starts (no request carries one); a desktop client starts it anew
        # for each session, so a newly chosen language applies from the next.
        language = answer_language(user_id=user.pk)
        caller = Caller(user=user, token=None, site_url=settings.SITE_URL, language=language)
        server = mcp_server(caller_of=lambda ctx: caller)
        close_old_connections()  # the look-up's connection is not held for the server's whole life
        anyio.run(server.run_stdio_async)
