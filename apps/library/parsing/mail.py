"""Email messages (eml) through the standard library: headers, the body, and attachments.

The body is the plain-text part, or the HTML part through the web-page parser. Attachments go
through the same dispatcher as any file (text, PDF, Office...), each located as
``{"attachment": name}``; those that cannot be indexed are listed with the reason.
"""

from __future__ import annotations

from email import policy
from email.errors import MessageError
from email.message import EmailMessage, Message
from email.parser import BytesParser

from django.utils.translation import gettext_noop

from apps.library.parsing.base import ParsedDocument, ParseError, TextBuilder, UnsupportedDocument
from apps.library.parsing.html import parse_html
from apps.library.parsing.webpage import parse_html_page

_HEADERS = ("From", "To", "Cc", "Date", "Subject")
# Forwarded messages nest; deeper than this is not a message a person wrote.
_MAX_DEPTH = 3


def parse_eml(data: bytes, name: str) -> ParsedDocument:
    try:
        message = BytesParser(policy=policy.default).parsebytes(data)
    except (MessageError, ValueError, LookupError) as exc:
        raise ParseError(
            gettext_noop("unreadable email message: %(reason)s"), reason=exc or type(exc).__name__
        ) from exc
    if not any(message.get(header) for header in _HEADERS):
        raise ParseError(gettext_noop("not an email message: it has no From, To, Date or Subject header"))
    builder = TextBuilder()
    _message(message, builder, depth=0)
    return builder.build()


def _message(message: Message, builder: TextBuilder, *, depth: int) -> None:
    assert isinstance(message, EmailMessage)  # policy.default builds EmailMessage throughout
    subject = " ".join(str(message.get("Subject") or "").split())
    builder.mark(heading=(subject,) if subject else ())
    for header in _HEADERS:
        value = " ".join(str(message.get(header) or "").split())
        if value:
            builder.add(f"{header}: {value}\n")
    attachments = [(_filename(part), _attachment(part, depth=depth)) for part in message.iter_attachments()]
    if attachments:
        listed = (
            name if isinstance(part, ParsedDocument) else f"{name} (not indexed: {part})" for name, part in attachments
        )
        builder.add("Attachments: " + ", ".join(listed) + "\n")
    builder.add("\n")
    body = message.get_body(preferencelist=("plain", "html"))
    if body is not None:
        builder.extend(_body(body))
    for name, part in attachments:
        if isinstance(part, ParsedDocument):
            builder.extend(part, place=(("attachment", name),), title=f"Attachment: {name}")


def _body(part: Message) -> ParsedDocument:
    assert isinstance(part, EmailMessage)
    text = _text(part)
    if part.get_content_subtype() != "html":
        return ParsedDocument(text=text)
    try:
        return parse_html_page(text.encode(), "body.html")
    except UnsupportedDocument:
        # A short HTML mail that is only a link looks like a redirect stub; it is still the message.
        return parse_html(text.encode(), "body.html")


def _text(part: EmailMessage) -> str:
    try:
        return str(part.get_content())
    except (LookupError, ValueError):
        # An unknown or wrong charset: the bytes are still mostly readable.
        payload = part.get_payload(decode=True)
        return payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""


def _attachment(part: EmailMessage, *, depth: int) -> ParsedDocument | str:
    """The attachment parsed, or why it is not indexed."""
    # The dispatcher dispatches to this module: imported here, when both are loaded.
    from apps.library.parsing import parse_document

    if part.get_content_type() == "message/rfc822":
        inner = part.get_content()
        if not isinstance(inner, EmailMessage) or depth >= _MAX_DEPTH:
            return "forwarded too many times"
        nested = TextBuilder()
        _message(inner, nested, depth=depth + 1)
        return nested.build()
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return "no content"
    try:
        return parse_document(data=payload, mime_type=part.get_content_type(), name=_filename(part))
    except (UnsupportedDocument, ParseError) as exc:
        return str(exc)


def _filename(part: EmailMessage) -> str:
    kind = part.get_content_type()
    fallback = "forwarded message" if kind == "message/rfc822" else f"unnamed {kind}"
    return " ".join(str(part.get_filename() or fallback).split())
