"""Reads of a folder's sync history."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.library.models import Folder, SyncLog


def sync_log_list(*, folder: Folder) -> QuerySet[SyncLog]:
    return SyncLog.objects.filter(folder=folder).order_by("-created_at", "-id")
