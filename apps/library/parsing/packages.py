"""Zip packages (docx, xlsx, pptx, ODF, epub) checked before any library unpacks them.

The central directory declares every member's size; zipfile never inflates a member past its
declared size (a lie fails the CRC check), so checking the declared sizes bounds memory for every
library that reads the package afterwards.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO
from xml.parsers.expat import ExpatError

from django.conf import settings
from django.utils.translation import gettext_noop
from lxml.etree import LxmlError

from apps.library.parsing.base import ParseError, UnsupportedDocument

# Compound File Binary: what an encrypted Office file (or a legacy .doc/.xls/.ppt) is.
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_OLE_ENCRYPTED = "EncryptionInfo".encode("utf-16-le")
# What a damaged package raises from inside the libraries: a member that fails to inflate or its
# CRC check, truncated XML, a missing part, a part of the wrong shape (SyntaxError covers
# ElementTree's ParseError).
_DAMAGE = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    OSError,
    SyntaxError,
    ExpatError,
    LxmlError,
)
# Small members may legitimately compress very well (a blank sheet); only large ones are judged.
_RATIO_FLOOR_BYTES = 1_000_000


def open_package(data: bytes, *, kind: str) -> zipfile.ZipFile:
    """The package as an open zip after the size checks; ``kind`` names the format in reasons."""
    if data.startswith(_OLE_MAGIC):
        if _OLE_ENCRYPTED in data:
            raise ParseError(
                gettext_noop("password-protected %(kind)s: it cannot be read without the password"), kind=kind
            )
        raise ParseError(
            gettext_noop("not a %(kind)s: an older binary Office file (.doc, .xls, .ppt) saved under this name"),
            kind=kind,
        )
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        members = package.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError, OSError) as exc:
        raise ParseError(
            gettext_noop("corrupt %(kind)s: %(reason)s"), kind=kind, reason=exc or type(exc).__name__
        ) from exc
    _check_sizes(members, kind=kind, packed_bytes=len(data))
    if any(member.flag_bits & 0x1 for member in members):
        raise ParseError(gettext_noop("password-protected %(kind)s: its zip members are encrypted"), kind=kind)
    return package


def package_check(stream: BinaryIO, *, kind: str) -> None:
    """``open_package``'s size checks on a seekable stream (an upload), reading only the directory."""
    packed_bytes = stream.seek(0, io.SEEK_END)
    stream.seek(0)
    try:
        members = zipfile.ZipFile(stream).infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError, OSError) as exc:
        raise ParseError(
            gettext_noop("corrupt %(kind)s: %(reason)s"), kind=kind, reason=exc or type(exc).__name__
        ) from exc
    finally:
        stream.seek(0)
    _check_sizes(members, kind=kind, packed_bytes=packed_bytes)


@contextmanager
def reading_package(kind: str, *library_errors: type[Exception]) -> Iterator[None]:
    """Turns whatever a library raises on a damaged package into a ParseError with the reason."""
    try:
        yield
    except (ParseError, UnsupportedDocument):
        raise
    except (*_DAMAGE, *library_errors) as exc:
        raise ParseError(
            gettext_noop("unreadable %(kind)s: %(reason)s"), kind=kind, reason=exc or type(exc).__name__
        ) from exc


def _check_sizes(members: list[zipfile.ZipInfo], *, kind: str, packed_bytes: int) -> None:
    limit = settings.INDEX_MAX_UNPACKED_BYTES
    total = sum(member.file_size for member in members)
    if total > limit:
        raise UnsupportedDocument(
            gettext_noop(
                "%(kind)s unpacks to %(unpacked)s from %(packed)s, more than the limit of %(limit)s"
                " (INDEX_MAX_UNPACKED_BYTES): possibly a zip bomb"
            ),
            kind=kind,
            unpacked=_size(total),
            packed=_size(packed_bytes),
            limit=_size(limit),
        )
    max_ratio = settings.INDEX_MAX_COMPRESSION_RATIO
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > _RATIO_FLOOR_BYTES and ratio > max_ratio:
            raise UnsupportedDocument(
                gettext_noop(
                    "%(kind)s member %(member)s is compressed %(ratio)s:1 (%(size)s), more than %(max_ratio)s:1"
                    " (INDEX_MAX_COMPRESSION_RATIO): possibly a zip bomb"
                ),
                kind=kind,
                member=member.filename,
                ratio=f"{ratio:.0f}",
                size=_size(member.file_size),
                max_ratio=max_ratio,
            )


def _size(count: int) -> str:
    for unit in ("bytes", "KB", "MB"):
        if count < 1000:
            return f"{count} {unit}"
        count //= 1000
    return f"{count} GB"
