"""Sharing a folder: members with roles, invitation links, and the audit entries they leave.

The owner manages members (FolderAction.MANAGE is checked by the API before these are called).
A revoke is announced on the folder's event stream, so the revoked person's open streams end.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Any

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.db.models.functions import Now
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import status

from apps.core.api import ApplicationError, ConflictError
from apps.core.audit import AuditAction, audit_record
from apps.library.models import Folder, FolderInvitation, FolderMembership, FolderRole
from apps.library.progress import FolderProgress
from apps.library.source_access import source_access_require

MEMBER_ROLES = (FolderRole.VIEWER, FolderRole.EDITOR)


def member_list(*, folder: Folder) -> QuerySet[FolderMembership]:
    return FolderMembership.objects.filter(folder=folder).select_related("user").order_by("user__username")


def _is_email(name: str) -> bool:
    # A name with an @ is only ever an address: allauth never makes such a username, and one
    # chosen on a signup form must not stand in for somebody's address.
    return "@" in name


def _verified_email_owners(*, email: str) -> QuerySet[EmailAddress]:
    """Who proved `email` (a Google sign-in verifies the address Google vouches for). User.email
    and unverified addresses are whatever someone typed, so they never count."""
    return EmailAddress.objects.filter(email__iexact=email, verified=True)


def _person_find(*, name: str) -> AbstractBaseUser:
    """A user by username, or by an email exactly one account has verified."""
    if _is_email(name):
        owners = list(_verified_email_owners(email=name).values_list("user_id", flat=True).distinct()[:2])
        if len(owners) != 1:
            raise ApplicationError(
                _("No account has verified this address; send an invitation link instead."), extra={"invite": True}
            )
        return get_user_model().objects.get(pk=owners[0])
    person = get_user_model().objects.filter(username=name).first()
    if person is None:
        raise ApplicationError(
            _("No one here is called %(name)r; send them an invitation link instead.") % {"name": name},
            extra={"invite": True},
        )
    return person


def member_add(*, folder: Folder, actor: AbstractBaseUser, name: str, role: str) -> FolderMembership:
    person = _person_find(name=name)
    if person.pk == folder.owner_id:
        raise ConflictError(_("The owner already has every right on this folder."))
    source_access_require(folder=folder, person=person)
    try:
        with transaction.atomic():
            membership = FolderMembership.objects.create(
                folder=folder, user_id=person.pk, role=role, added_by_id=actor.pk
            )
    except IntegrityError:
        raise ConflictError(
            _("%(name)s is already a member; change their role instead.") % {"name": person.get_username()}
        ) from None
    _record(folder=folder, actor=actor, action=AuditAction.SHARE, target=person.get_username(), role=role)
    return membership


def member_role_change(*, membership: FolderMembership, actor: AbstractBaseUser, role: str) -> FolderMembership:
    before = membership.role
    if before == role:
        return membership
    membership.role = role
    membership.save(update_fields=["role", "updated_at"])
    _record(
        folder=membership.folder,
        actor=actor,
        action=AuditAction.ROLE_CHANGE,
        target=membership.user.get_username(),
        **{"from": before, "to": role},
    )
    return membership


def member_remove(*, membership: FolderMembership, actor: AbstractBaseUser) -> None:
    folder, person = membership.folder, membership.user
    membership.delete()
    _record(folder=folder, actor=actor, action=AuditAction.REVOKE, target=person.get_username(), role=membership.role)


def _record(*, folder: Folder, actor: AbstractBaseUser, action: str, target: str, **detail: Any) -> None:
    """The audit entry of a change to who may use the folder, and word of it to the folder's open
    streams (after commit): each re-checks its reader, so a revoked person's stream ends."""
    audit_record(actor=actor, action=action, folder_id=folder.pk, folder_name=folder.name, target=target, detail=detail)
    transaction.on_commit(FolderProgress(folder.pk).members_changed)


# -- invitations -------------------------------------------------------------------------------


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class InvitationForAnotherAccount(ApplicationError):
    status_code = status.HTTP_403_FORBIDDEN


def invitation_create(
    *, folder: Folder, actor: AbstractBaseUser, role: str, invitee: str = "", anyone_with_link: bool = False
) -> tuple[FolderInvitation, str]:
    """A new invitation and its token (shown once, to the inviter; only its hash is kept).

    It is either for one person (`invitee`) or for anyone with the link, never by default: a link
    meant for one person admitting whoever it was forwarded to is the mistake this prevents.
    """
    invitee = invitee.strip()
    if bool(invitee) == anyone_with_link:
        raise ApplicationError(
            _("Choose who the invitation is for: one person (their email or username) or anyone with the link.")
        )
    token = secrets.token_urlsafe(24)
    invitation = FolderInvitation.objects.create(
        folder=folder,
        role=role,
        invitee=invitee,
        token_hash=_token_hash(token),
        created_by=actor,  # type: ignore[misc]
        expires_at=timezone.now() + dt.timedelta(seconds=settings.INVITATION_TTL_SECONDS),
    )
    audit_record(
        actor=actor,
        action=AuditAction.INVITE,
        folder_id=folder.pk,
        folder_name=folder.name,
        target=invitee,
        detail={"role": role, "anyone_with_link": anyone_with_link},
    )
    return invitation, token


def invitation_pending_list(*, folder: Folder) -> QuerySet[FolderInvitation]:
    return FolderInvitation.objects.filter(
        folder=folder, accepted_at__isnull=True, expires_at__gt=timezone.now()
    ).order_by("-created_at")


def invitation_get(*, token: str) -> FolderInvitation:
    """The open invitation behind `token`; a clear refusal for a used, expired or unknown one."""
    invitation = FolderInvitation.objects.select_related("folder").filter(token_hash=_token_hash(token)).first()
    if invitation is None:
        raise ApplicationError(_("This invitation link is not valid; ask for a new one."))
    if invitation.accepted_at is not None:
        raise ApplicationError(_("This invitation link was already used; ask for a new one."))
    if invitation.expires_at <= timezone.now():
        raise ApplicationError(_("This invitation link has expired; ask for a new one."))
    return invitation


def invitation_admits(*, invitation: FolderInvitation, verified_emails: list[str], username: str = "") -> bool:
    """Whether the invitation is for this person: anyone with the link, or its invitee by
    username or by an address the person has verified (someone signing up has no username yet)."""
    if invitation.anyone_with_link:
        return True
    if _is_email(invitation.invitee):
        return invitation.invitee.lower() in {email.lower() for email in verified_emails}
    return invitation.invitee == username


def invitation_check_invitee(*, invitation: FolderInvitation, user: AbstractBaseUser) -> None:
    verified = list(EmailAddress.objects.filter(user_id=user.pk, verified=True).values_list("email", flat=True))
    if not invitation_admits(invitation=invitation, username=user.get_username(), verified_emails=verified):
        raise InvitationForAnotherAccount(_("This invitation is for another account."))


def invitation_accept(*, token: str, user: AbstractBaseUser) -> Folder:
    """Join the invitation's folder. The claim is a conditional UPDATE, so a link works once."""
    invitation = invitation_get(token=token)
    invitation_check_invitee(invitation=invitation, user=user)
    folder = invitation.folder
    if user.pk != folder.owner_id:
        source_access_require(folder=folder, person=user)
    with transaction.atomic():
        # The expiry again, by the database's clock: the link may have expired since it was read.
        claimed = FolderInvitation.objects.filter(
            pk=invitation.pk, accepted_at__isnull=True, expires_at__gt=Now()
        ).update(accepted_at=timezone.now(), accepted_by=user)
        if not claimed:
            invitation_get(token=token)  # raises the reason: used or expired
            raise ApplicationError(_("This invitation link was already used; ask for a new one."))
        if user.pk != folder.owner_id:
            membership, created = FolderMembership.objects.get_or_create(
                folder=folder, user=user, defaults={"role": invitation.role, "added_by_id": invitation.created_by_id}
            )
            # An invitation never lowers a role the person already has.
            if not created and membership.role == FolderRole.VIEWER and invitation.role == FolderRole.EDITOR:
                membership.role = FolderRole.EDITOR
                membership.save(update_fields=["role", "updated_at"])
        _record(
            folder=folder,
            actor=user,
            action=AuditAction.JOIN,
            target=user.get_username(),
            role=invitation.role,
            invitation=invitation.pk,
        )
    return folder


def invitation_revoke(*, invitation: FolderInvitation) -> None:
    invitation.delete()
