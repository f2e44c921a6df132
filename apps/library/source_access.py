"""Shares respect the source's own permissions: a Drive folder is shared here only with people
whose Google account can open it in Drive, and each sync checks again.

The member's Google identity is the one they signed in with (allauth's Google account); the
question goes to Drive with the owner's credentials (`READER_CHECKS`, registered by connectors).
"""

from __future__ import annotations

import logging

from allauth.socialaccount.models import SocialAccount
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.api import ApplicationError
from apps.core.audit import AuditAction, audit_record
from apps.library.models import Folder, FolderMembership
from apps.library.progress import FolderProgress
from apps.library.sources import READER_CHECKS, SourceError

logger = logging.getLogger(__name__)


def google_email(*, user: AbstractBaseUser) -> str:
    """The verified email of the Google account the user signed in with, or ""."""
    claims = (
        SocialAccount.objects.filter(user_id=user.pk, provider="google").values_list("extra_data", flat=True).first()
    )
    if not isinstance(claims, dict) or claims.get("email_verified") is False:
        return ""
    return str(claims.get("email", ""))


def source_access_require(*, folder: Folder, person: AbstractBaseUser) -> None:
    """Refuse, with the reason, to share `folder` with someone its source would not let in."""
    check = READER_CHECKS.get(folder.source)
    if check is None:
        return
    name = person.get_username()
    email = google_email(user=person)
    if not email:
        raise ApplicationError(
            _(
                "%(name)s has not signed in with Google here, so nobody can check that their Google account "
                "may open this Drive folder. Ask them to sign in with Google once, then share again."
            )
            % {"name": name}
        )
    try:
        allowed = check(folder)(email)
    except SourceError as exc:
        raise ApplicationError(
            _("Google Drive could not say who may open this folder: %(reason)s") % {"reason": exc}
        ) from None
    if not allowed:
        raise ApplicationError(
            _(
                "%(name)s's Google account (%(email)s) cannot open this folder in Google Drive. "
                "Share it with them in Drive first."
            )
            % {"name": name, "email": email}
        )


def members_source_recheck(*, folder: Folder) -> None:
    """After a sync: members whose Google account lost the folder in Drive lose it here, and
    get it back once Drive lets them in again. A check that fails changes nobody's access."""
    check = READER_CHECKS.get(folder.source)
    if check is None:
        return
    memberships = list(FolderMembership.objects.filter(folder=folder).select_related("user"))
    if not memberships:
        return
    try:
        allows = check(folder)  # one listing of the folder's permissions for every member
    except SourceError:
        logger.warning("could not re-check Drive access of folder %s's members", folder.pk, exc_info=True)
        return
    changed = False
    for membership in memberships:
        email = google_email(user=membership.user)
        allowed = bool(email) and allows(email)
        lost = membership.source_access_lost_at is not None
        if allowed == lost:
            membership.source_access_lost_at = None if allowed else timezone.now()
            membership.save(update_fields=["source_access_lost_at", "updated_at"])
            audit_record(
                actor=None,
                action=AuditAction.SOURCE_ACCESS,
                folder_id=folder.pk,
                folder_name=folder.name,
                target=membership.user.get_username(),
                detail={"drive_access": "restored" if allowed else "lost", "email": email},
            )
            changed = True
    if changed:
        FolderProgress(folder.pk).members_changed()
