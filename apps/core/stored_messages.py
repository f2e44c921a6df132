"""Texts a worker stores and people read later, shown in the reader's language (issue 41).

A worker has no reader, so it stores the English text (operators, the admin, logs and grep read
that) and, beside it in a ``<field>_i18n`` JSON column, the message's msgid and parameters. Pages
and API responses render them with ``stored_message_render`` in the request's language; a row
without them (written before they existed, or an unforeseen error) shows its English text.
"""

from __future__ import annotations

import logging
from typing import Any

from django.utils.translation import gettext

logger = logging.getLogger(__name__)

# A parameter taken from someone else's text (a library's exception) is kept whole in the English
# text but capped here, so one long message cannot bloat the row twice.
_PARAM_MAX_CHARS = 2000
I18N_SUFFIX = "_i18n"


class StoredMessage(str):
    """English text that remembers its msgid (marked with ``gettext_noop``) and parameters.

    A str, so code that passes, compares or logs a reason needs nothing new. A parameter that is
    itself a StoredMessage (a kind of document, a unit) is translated too; anything else but a
    number becomes text. Slicing or formatting it gives a plain str, which forgets the msgid:
    writers store it whole through ``stored_message_fields``.
    """

    msgid: str
    params: dict[str, Any]

    def __new__(cls, msgid: str, /, **params: object) -> StoredMessage:
        if isinstance(msgid, StoredMessage) and not params:
            return msgid  # an exception rebuilt from its args (unpickled) keeps its message
        clean = {name: _param(value) for name, value in params.items()}
        message = super().__new__(cls, msgid % clean if clean else msgid)
        message.msgid = str(msgid)
        message.params = clean
        return message

    def as_json(self) -> dict[str, Any]:
        params = {
            name: value.as_json() if isinstance(value, StoredMessage) else _capped(value)
            for name, value in self.params.items()
        }
        return {"msgid": self.msgid, "params": params}


class StoredMessageError(Exception):
    """An error whose text a person reads later: raised as ``Error(gettext_noop("... %(x)s"), x=...)``.

    ``str(exc)`` is the English text; ``exc.message`` keeps the msgid and parameters."""

    def __init__(self, msgid: str = "", /, **params: object) -> None:
        super().__init__(StoredMessage(msgid, **params))

    @property
    def message(self) -> StoredMessage:
        return StoredMessage(self.args[0]) if self.args else StoredMessage("")


def _param(value: object) -> str | int | float:
    if isinstance(value, StoredMessage | int | float):
        return value
    return str(value)


def _capped(value: str | int | float) -> str | int | float:
    return value[:_PARAM_MAX_CHARS] if isinstance(value, str) else value


def message_of(exc: BaseException) -> str:
    """The exception's text, a StoredMessage when it was raised with one."""
    if len(exc.args) == 1 and isinstance(exc.args[0], StoredMessage):
        return exc.args[0]
    return str(exc)


def message_shown(exc: BaseException) -> str:
    """The exception's text in the active language, for a refusal a person reads now (an API error):
    a StoredMessage rendered, any other text as it is."""
    text = message_of(exc)
    return stored_message_render(text, stored_message_json(text))


def stored_message_json(text: str) -> dict[str, Any] | None:
    return text.as_json() if isinstance(text, StoredMessage) and text else None


def stored_message_fields(field: str, text: str, *, limit: int = 4000) -> dict[str, Any]:
    """The update of a stored text and its ``_i18n`` column: ``.update(**stored_message_fields("error", reason))``."""
    return {field: text[:limit], field + I18N_SUFFIX: stored_message_json(text)}


def stored_message_render(text: str, stored: Any) -> str:
    """The stored text in the active language; the English ``text`` when there is no msgid (an
    old row) or the translation does not fit its parameters."""
    if not text or not isinstance(stored, dict) or not isinstance(stored.get("msgid"), str):
        return text
    try:
        return _rendered(stored)
    except (KeyError, TypeError, ValueError):
        logger.warning("stored message %r does not render; shown in English", stored.get("msgid"))
        return text


def _rendered(stored: dict[str, Any]) -> str:
    params = stored.get("params") or {}
    if not isinstance(params, dict):
        raise TypeError("params is not an object")
    values = {name: _rendered(value) if isinstance(value, dict) else value for name, value in params.items()}
    translated = gettext(stored["msgid"])
    return translated % values if values else translated


def stored_messages_in(data: dict[str, Any]) -> dict[str, Any]:
    """An event's payload with each ``<key>`` that has a ``<key>_i18n`` beside it rendered in the
    active language (the reader's, in their stream). The ``_i18n`` keys stay, as in the API's
    log: a client may render them itself."""
    if not any(key.endswith(I18N_SUFFIX) for key in data):
        return data
    shown = dict(data)
    for key, value in data.items():
        text_key = key.removesuffix(I18N_SUFFIX)
        if key.endswith(I18N_SUFFIX) and isinstance(data.get(text_key), str):
            shown[text_key] = stored_message_render(data[text_key], value)
    return shown
