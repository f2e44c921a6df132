"""The one answer to "may this user do this to this folder?".

Every endpoint, page, event stream and file read that starts from a folder, a file or a chunk asks
here; nothing else filters by owner. What a user has no role on does not exist for them (404, the
same answer as a missing id); what their role does not allow is a 403 that says which role would.
A user authenticated by a personal token limited to some folders has no role on any other here.
"""

from __future__ import annotations

import enum
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import Case, OuterRef, Q, QuerySet, Subquery, Value, When
from django.http import Http404
from django.utils.translation import gettext, gettext_lazy
from rest_framework import status

from apps.core.api import ApplicationError
from apps.core.tokens import token_folder_limit
from apps.library.models import File, Folder, FolderMembership, FolderRole

AnyUser = AbstractBaseUser | AnonymousUser


class FolderAction(enum.Enum):
    """What a caller wants to do, and the least role that allows it."""

    VIEW = FolderRole.VIEWER  # list, search, chat, open documents, follow the folder's events
    EDIT = FolderRole.EDITOR  # sync, re-index, retry, excludes, organize (accept, choose, undo), upload
    MANAGE = FolderRole.OWNER  # members, rename, remove


_RANK = {FolderRole.VIEWER: 0, FolderRole.EDITOR: 1, FolderRole.OWNER: 2}
# A member's refusal, whole in each language: the action's least role, and theirs.
_REFUSALS = {
    (FolderAction.EDIT, FolderRole.VIEWER): gettext_lazy(
        "Only an editor of this folder can do this; you are a viewer."
    ),
    (FolderAction.MANAGE, FolderRole.VIEWER): gettext_lazy(
        "Only the owner of this folder can do this; you are a viewer."
    ),
    (FolderAction.MANAGE, FolderRole.EDITOR): gettext_lazy(
        "Only the owner of this folder can do this; you are an editor."
    ),
}


class FolderPermissionDenied(ApplicationError):
    status_code = status.HTTP_403_FORBIDDEN


def _memberships() -> QuerySet[FolderMembership]:
    """Memberships that give a role: not those whose account lost access at the source."""
    return FolderMembership.objects.filter(source_access_lost_at__isnull=True)


def _member_roles(action: FolderAction) -> list[FolderRole]:
    """The membership roles that allow `action` (ownership is the folder's owner, never a membership)."""
    return [role for role, rank in _RANK.items() if rank >= _RANK[action.value] and role != FolderRole.OWNER]


def folders_visible(*, user: AnyUser) -> QuerySet[Folder]:
    """Every folder the user has a role on: owned or shared with them."""
    if not user.is_authenticated:
        return Folder.objects.none()
    shared = _memberships().filter(user_id=user.pk)
    member_role = shared.filter(folder_id=OuterRef("pk")).values("role")[:1]
    return _token_limited(
        user, Folder.objects.filter(Q(owner_id=user.pk) | Q(pk__in=shared.values("folder_id")))
    ).annotate(
        caller_role=Case(When(owner_id=user.pk, then=Value(FolderRole.OWNER.value)), default=Subquery(member_role))
    )


def _token_limited(user: AnyUser, folders: QuerySet[Folder]) -> QuerySet[Folder]:
    limit = token_folder_limit(user=user)
    return folders if limit is None else folders.filter(pk__in=limit)


def folder_ids_visible(user: AbstractBaseUser, folder_ids: list[int]) -> set[int]:
    """Which of these folders the user has a role on (core's check of a new token's folder limit)."""
    return set(folders_visible(user=user).filter(pk__in=folder_ids).values_list("pk", flat=True))


def folder_ids_allowed(*, user: AnyUser, action: FolderAction) -> QuerySet[Folder, Any]:
    """The ids (a subquery) of the folders the user may do `action` to, for filtering other rows."""
    if not user.is_authenticated:
        return Folder.objects.none().values("pk")
    shared = _memberships().filter(user_id=user.pk, role__in=_member_roles(action)).values("folder_id")
    return _token_limited(user, Folder.objects.filter(Q(owner_id=user.pk) | Q(pk__in=shared))).values("pk")


def folder_user_ids_allowed(*, folder_id: int, action: FolderAction) -> list[int]:
    """Who may do `action` to the folder: its owner first, then members whose role allows it."""
    # One statement: indexing publishes an event per file, each copied to these people.
    members = _memberships().filter(folder_id=folder_id, role__in=_member_roles(action)).values("user_id")
    row = Folder.objects.filter(pk=folder_id).values_list("owner_id", ArraySubquery(members)).first()
    if row is None:
        return []
    owner_id, member_ids = row
    return [owner_id, *(user_id for user_id in member_ids if user_id != owner_id)]


def folder_role(*, user: AnyUser, folder: Folder) -> FolderRole | None:
    limit = token_folder_limit(user=user)
    if not user.is_authenticated or (limit is not None and folder.pk not in limit):
        return None
    if folder.owner_id == user.pk:
        return FolderRole.OWNER
    role = _memberships().filter(folder_id=folder.pk, user_id=user.pk).values_list("role", flat=True).first()
    return FolderRole(role) if role else None


def folder_role_check(*, user: AnyUser, folder: Folder, action: FolderAction) -> FolderRole:
    """The user's role on `folder` when it allows `action`; 404 without a role, 403 below it."""
    role = folder_role(user=user, folder=folder)
    if role is None:
        raise Http404(gettext("Folder not found."))
    if _RANK[role] < _RANK[action.value]:
        raise FolderPermissionDenied(str(_REFUSALS[(action, role)]))
    return role


def folder_access(*, user: AnyUser, folder_id: int, action: FolderAction = FolderAction.VIEW) -> Folder:
    """The folder, when the user may do `action` to it (else 404 or 403, see the module)."""
    folder = Folder.objects.filter(pk=folder_id).first()
    if folder is None:
        raise Http404(gettext("Folder not found."))
    # Serializers show the caller's role (`folders_visible` annotates the same attribute).
    folder.caller_role = folder_role_check(user=user, folder=folder, action=action).value  # type: ignore[attr-defined]
    return folder


async def afolder_access(*, user: AnyUser, folder_id: int, action: FolderAction = FolderAction.VIEW) -> bool:
    """For async views (event streams): whether the user may do `action` to the folder."""
    return await folder_ids_allowed(user=user, action=action).filter(pk=folder_id).aexists()


def file_access(*, user: AnyUser, file_id: int, action: FolderAction = FolderAction.VIEW) -> File:
    """A file of a folder the user may do `action` to (404 for a file of a folder they cannot see)."""
    file = File.objects.filter(pk=file_id).select_related("folder").defer("embedding", "search_vector").first()
    if file is None:
        raise Http404(gettext("File not found."))
    try:
        folder_role_check(user=user, folder=file.folder, action=action)
    except Http404:
        raise Http404(gettext("File not found.")) from None
    return file
