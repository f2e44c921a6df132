from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the demo login used by `make run` (staff, so it can open /admin/) if missing."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="demo")
        parser.add_argument("--password", default="demo-password")

    def handle(self, *args: Any, username: str, password: str, **options: Any) -> None:
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            user.set_password(password)
            user.save()
        self.stdout.write(
            f"login: {username} / {password}" + ("" if created else " (existing user; password unchanged)")
        )
