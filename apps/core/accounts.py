"""Password accounts stay the operator's to make (admin, `createsuperuser`): no signup form.

Google sign-in creates accounts under its own policy (apps/web/signup.py).
"""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from django.http import HttpRequest


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return False
