"""Who a Google sign-in may create an account for (allauth asks `is_open_for_signup` only when no
account is linked to that Google identity yet, so existing accounts sign in as before).

An address Google verified at one of `SIGNUP_ALLOWED_DOMAINS`, or a visitor who opened a valid
invitation link meant for them before signing in: the invitation page keeps its token in the
session for exactly this. Anyone else gets allauth's signup-closed page, which says whom to ask
(config/templates/account/signup_closed.html).
"""

from __future__ import annotations

from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialLogin
from django.conf import settings
from django.http import HttpRequest

from apps.core.api import ApplicationError
from apps.library.members import invitation_admits, invitation_get

INVITATION_SESSION_KEY = "invitation_token"


def invitation_token_keep(*, request: HttpRequest, token: str) -> None:
    request.session[INVITATION_SESSION_KEY] = token


def invitation_token_forget(*, request: HttpRequest) -> None:
    request.session.pop(INVITATION_SESSION_KEY, None)


def _domain(email: str) -> str:
    return email.rpartition("@")[2].lower()


def _invitation_admits(*, request: HttpRequest, verified_emails: list[str]) -> bool:
    token = request.session.get(INVITATION_SESSION_KEY)
    if not token:
        return False
    try:
        invitation = invitation_get(token=token)
    except ApplicationError:  # used, expired or forged: it opens nothing
        return False
    return invitation_admits(invitation=invitation, verified_emails=verified_emails)


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest, sociallogin: SocialLogin) -> bool:
        # Only what Google vouches for (email_verified) decides; an unverified claim is anyone's.
        verified = [address.email for address in sociallogin.email_addresses if address.verified]
        if any(_domain(email) in settings.SIGNUP_ALLOWED_DOMAINS for email in verified):
            return True
        return _invitation_admits(request=request, verified_emails=verified)
