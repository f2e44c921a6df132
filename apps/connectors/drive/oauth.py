"""The Google OAuth web flow for Drive: a consent URL, then the callback's code exchanged for tokens.

PKCE (S256) and a one-time state bound to the user guard the callback. The state row carries the
code verifier (encrypted) between the two requests, which may reach different web processes.
Tokens go straight into the encrypted DriveCredential; nothing here logs them.
"""

from __future__ import annotations

import datetime as dt
import secrets

import requests
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext
from google_auth_oauthlib.flow import Flow
from oauthlib.oauth2 import OAuth2Error

from apps.connectors.drive.client import DRIVE_SCOPES
from apps.connectors.drive.factory import drive_oauth_endpoints
from apps.connectors.models import DriveCredential, OAuthState
from apps.connectors.services import drive_credential_store
from apps.core.api import ApplicationError
from apps.library.models import Folder, FolderStatus, SourceKind
from apps.library.services import folder_sync_enqueue

# Long enough to read a consent screen, short enough that a leaked state is soon worthless.
OAUTH_STATE_TTL = dt.timedelta(minutes=10)
_TOKEN_TIMEOUT_SECONDS = 30


def drive_connect_start(*, user: AbstractBaseUser) -> str:
    """The Google consent URL for this user (offline access, consent forced so a refresh token comes)."""
    if not (settings.GOOGLE_OAUTH_CLIENT_ID and settings.GOOGLE_OAUTH_CLIENT_SECRET):
        raise ApplicationError(
            gettext("Google OAuth is not configured (GOOGLE_OAUTH_CLIENT_ID, GOOGLE_OAUTH_CLIENT_SECRET).")
        )
    OAuthState.objects.filter(owner_id=user.pk, created_at__lt=timezone.now() - OAUTH_STATE_TTL).delete()
    state = secrets.token_urlsafe(32)
    flow = _flow(state=state)
    auth_url, _ = flow.authorization_url(access_type="offline", prompt="consent", state=state)
    OAuthState.objects.create(owner_id=user.pk, state=state, code_verifier=flow.code_verifier)
    return str(auth_url)


def drive_connect_finish(*, user: AbstractBaseUser, state: str, code: str, error: str = "") -> DriveCredential:
    """Exchange the callback's code for tokens and store them; Drive folders awaiting reauth resume."""
    pending = OAuthState.objects.filter(state=state, owner_id=user.pk).first()
    # Another user's state looks unknown. Deleting is the claim: a state serves one callback only.
    if pending is None or not OAuthState.objects.filter(pk=pending.pk).delete()[0]:
        raise ApplicationError(
            gettext(
                "This Google sign-in response is not valid: its state is unknown, forged or already used. "
                "Nothing was stored; connect Google Drive again."
            )
        )
    if pending.created_at < timezone.now() - OAUTH_STATE_TTL:
        raise ApplicationError(
            gettext(
                "The Google sign-in took too long: its state has expired. Nothing was stored; "
                "connect Google Drive again."
            )
        )
    if error:
        if error == "access_denied":
            raise ApplicationError(
                gettext("You did not allow access to Google Drive (access_denied); nothing was connected.")
            )
        raise ApplicationError(gettext("Google Drive was not connected: %(error)s.") % {"error": error[:100]})
    if not code:
        raise ApplicationError(gettext("The callback carries no authorization code."))
    flow = _flow(state=state, code_verifier=pending.code_verifier)
    try:
        flow.fetch_token(code=code, timeout=_TOKEN_TIMEOUT_SECONDS)
    except OAuth2Error as exc:
        # ``from None``: the exception context may hold the request body (code and verifier).
        raise ApplicationError(
            gettext("Google refused the authorization (%(error)s); connect Google Drive again.") % {"error": exc.error}
        ) from None
    except requests.RequestException:
        raise ApplicationError(gettext("Google could not be reached to finish connecting Drive; try again.")) from None
    credentials = flow.credentials
    if not credentials.refresh_token:
        raise ApplicationError(
            gettext("Google granted no offline access (no refresh token); connect Google Drive again.")
        )
    with transaction.atomic():
        credential = drive_credential_store(
            user=user,
            access_token=credentials.token,
            refresh_token=credentials.refresh_token,
            expiry=credentials.expiry,
            scopes=list(credentials.granted_scopes or DRIVE_SCOPES),
        )
        _reauthorized_folders_resume(user=user)
    return credential


def _reauthorized_folders_resume(*, user: AbstractBaseUser) -> None:
    folders = list(Folder.objects.filter(owner_id=user.pk, source=SourceKind.DRIVE, status=FolderStatus.NEEDS_REAUTH))
    Folder.objects.filter(pk__in=[folder.pk for folder in folders]).update(
        status=FolderStatus.PENDING, last_error="", last_error_i18n=None
    )
    for folder in folders:
        folder_sync_enqueue(folder=folder)


def _flow(*, state: str, code_verifier: str | None = None) -> Flow:
    auth_uri, token_uri = drive_oauth_endpoints()
    client = {
        "web": {
            "client_id": settings.GOOGLE_OAUTH_CLIENT_ID,
            "client_secret": settings.GOOGLE_OAUTH_CLIENT_SECRET,
            "auth_uri": auth_uri,
            "token_uri": token_uri,
        }
    }
    return Flow.from_client_config(
        client,
        scopes=list(DRIVE_SCOPES),
        redirect_uri=settings.GOOGLE_OAUTH_REDIRECT_URI,
        state=state,
        code_verifier=code_verifier,
    )
