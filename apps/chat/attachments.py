"""Images sent with a question (multipart `images`), checked before anything is saved and then
kept with the question (`MessageAttachment`); `image_reading` reads them when a run answers.

At most CHAT_MAX_IMAGES, each non-empty and at most CHAT_IMAGE_MAX_BYTES, and typed by content
(`filetype`'s signatures, as inbox uploads are; the name and the declared type count for nothing):
PNG, JPEG, WebP, GIF or HEIC. Anything else is a 400 naming the image and what it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import filetype
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.chat.models import Message, MessageAttachment
from apps.core.api import ApplicationError

ATTACHABLE_TYPES = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/webp": "WebP",
    "image/gif": "GIF",
    "image/heic": "HEIC",
}
ACCEPTED = gettext_lazy("PNG, JPEG, WebP, GIF or HEIC")
SNIFF_BYTES = 8192  # as much as filetype's signatures look at
NAME_CHARS = 255


@dataclass(frozen=True)
class ImageUpload:
    name: str
    mime_type: str
    data: bytes


def images_check(*, uploads: Sequence[UploadedFile]) -> list[ImageUpload]:
    """The uploads as images to keep, in the order sent; ApplicationError (400) for the first one refused."""
    limit = settings.CHAT_MAX_IMAGES
    if len(uploads) > limit:
        raise ApplicationError(
            _("%(count)s images were sent; a question may carry at most %(limit)s (CHAT_MAX_IMAGES).")
            % {"count": len(uploads), "limit": limit}
        )
    return [_checked(upload, position=position) for position, upload in enumerate(uploads, start=1)]


def _checked(upload: UploadedFile, *, position: int) -> ImageUpload:
    name = _clean_name(upload.name, position=position)
    size, cap = upload.size or 0, settings.CHAT_IMAGE_MAX_BYTES
    if size > cap:
        raise ApplicationError(
            _("%(name)s is %(size)s bytes; an image may be at most %(cap)s bytes (CHAT_IMAGE_MAX_BYTES).")
            % {
                "name": name,
                "size": number_format(size, force_grouping=True),
                "cap": number_format(cap, force_grouping=True),
            }
        )
    if size == 0:
        raise ApplicationError(_("%(name)s is empty.") % {"name": name})
    upload.seek(0)
    data = upload.read()
    sniffed = filetype.guess_mime(data[:SNIFF_BYTES])
    if sniffed not in ATTACHABLE_TYPES:
        refusal = (
            _("%(name)s is a %(type)s file; attach %(accepted)s images.")
            if sniffed
            else _("%(name)s is not a picture in a known format; attach %(accepted)s images.")
        )
        raise ApplicationError(refusal % {"name": name, "type": sniffed, "accepted": ACCEPTED})
    return ImageUpload(name=name, mime_type=sniffed, data=data)


def _clean_name(name: str | None, *, position: int) -> str:
    """The name as sent (Django already took its last path segment), printable, or "image N"."""
    printable = "".join(char for char in name or "" if char.isprintable()).strip()
    return printable[:NAME_CHARS] or f"image {position}"


def attachments_create(*, message: Message, images: Sequence[ImageUpload]) -> list[MessageAttachment]:
    return MessageAttachment.objects.bulk_create(
        MessageAttachment(
            message=message,
            position=position,
            name=image.name,
            mime_type=image.mime_type,
            size=len(image.data),
            data=image.data,
        )
        for position, image in enumerate(images, start=1)
    )
