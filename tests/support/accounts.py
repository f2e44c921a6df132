"""People and the email addresses they have proven: allauth's EmailAddress rows, as a Google
sign-in leaves them (verified when Google says so) or as a profile edit would (unverified)."""

from __future__ import annotations

from allauth.account.models import EmailAddress
from django.contrib.auth.models import AbstractBaseUser


def email_address_add(*, user: AbstractBaseUser, email: str, verified: bool = True) -> EmailAddress:
    return EmailAddress.objects.create(user=user, email=email, verified=verified, primary=verified)
