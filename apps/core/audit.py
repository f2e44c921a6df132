"""The audit log's one write: every share, role change, revoke, move, undo and removal."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from apps.core.models import AuditEntry


class AuditAction:
    SHARE = "share"
    ROLE_CHANGE = "role_change"
    REVOKE = "revoke"
    INVITE = "invite"
    JOIN = "join"
    MOVE = "move"
    UNDO = "undo"
    REMOVE = "remove"
    SOURCE_ACCESS = "source_access"  # a member's access at the source (Drive) was lost or restored


def audit_record(
    *,
    actor: AbstractBaseUser | None,
    action: str,
    folder_id: int | None,
    folder_name: str = "",
    target: str = "",
    detail: dict[str, Any] | None = None,
) -> AuditEntry:
    return AuditEntry.objects.create(
        actor_id=actor.pk if actor is not None else None,
        actor_name=actor.get_username() if actor is not None else "",
        action=action,
        folder_id=folder_id,
        folder_name=folder_name[:255],
        target=target[:1024],
        detail=detail or {},
    )
