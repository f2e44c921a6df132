"""A person's choice of interface language: kept on their Preferences, read on each request
(apps.core.middleware.UserLanguageMiddleware) and by the worker answering them."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation.trans_real import parse_accept_lang_header

from apps.core.api import ApplicationError
from apps.core.models import Preferences


def language_codes() -> list[str]:
    return [code for code, _name in settings.LANGUAGES]


def user_language(*, user_id: int | None) -> str:
    """The language the person chose; "" when they left it to their browser (or nobody is signed in)."""
    if user_id is None:
        return ""
    chosen = Preferences.objects.filter(user_id=user_id).values_list("language", flat=True).first() or ""
    # A language later taken off LANGUAGES falls back to the browser's.
    return chosen if chosen in language_codes() else ""


def answer_language(*, user_id: int | None, asked: str = "") -> str:
    """The language to write to a person in: the one they chose, else `asked` (a request's, from its
    cookie or Accept-Language) when it is one of LANGUAGES, else LANGUAGE_CODE."""
    return user_language(user_id=user_id) or (asked if asked in language_codes() else "") or settings.LANGUAGE_CODE


def request_language(*, user_id: int | None) -> str:
    """`answer_language` in a request, asked what LocaleMiddleware negotiated (cookie, Accept-Language).
    A token's request gets its person's choice here: UserLanguageMiddleware runs before DRF knows them."""
    return answer_language(user_id=user_id, asked=translation.get_language())


def accepted_language(*, header: str) -> str:
    """The first of LANGUAGES an Accept-Language header asks for (as LocaleMiddleware reads it), or ""."""
    for code, _quality in parse_accept_lang_header(header):  # best first
        if code == "*":  # any language: the site's own
            break
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return ""


def language_check(*, language: str) -> str:
    """`language` when it is one of LANGUAGES' codes or "" (the browser's); else a 400."""
    if language and language not in language_codes():
        raise ApplicationError(
            _("Not a language of this site; choose one of: %(codes)s.") % {"codes": ", ".join(language_codes())}
        )
    return language


def user_language_set(*, user: AbstractBaseUser, language: str) -> Preferences:
    preferences, _created = Preferences.objects.update_or_create(
        user_id=user.pk, defaults={"language": language_check(language=language)}
    )
    return preferences
