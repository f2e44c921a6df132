"""The sign-up policy for allauth's signup-closed page, which renders without a view of ours."""

from __future__ import annotations

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def signup_allowed_domains() -> list[str]:
    return list(settings.SIGNUP_ALLOWED_DOMAINS)
