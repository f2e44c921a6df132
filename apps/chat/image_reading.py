"""What a run reads from the images attached to its question, as sources it can cite.

Each image's text by OCR (Tesseract, through the library's image parser: offline), and the vision
model's description when the answer model takes images (`LLM_VISION`), asked as `describe_image`
asks it. What was read is kept on the attachment, so a regenerated, continued or fallen-back answer
numbers and cites the images alike without reading them again (a description that failed is asked
for again). The images lead the sources, as "[1] receipt.png · image 1, text read by OCR", and the
answer ends with a line saying what was used (`QuestionImages.note`).
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from PIL import Image

from apps.chat.agent.tools.images import VISION_TYPES, image_description
from apps.chat.events import RunEvents
from apps.chat.models import Message, MessageAttachment
from apps.chat.prompts import NumberedSource
from apps.core.logging import redact
from apps.library.parsing import ParseError, UnsupportedDocument, parse_document
from apps.llm.base import LLMError, LLMProvider
from apps.llm.factory import get_model
from apps.llm.failures import failure_kind
from apps.llm.sources import describe_location
from apps.llm.types import ImagePart, TextDelta, Usage

logger = logging.getLogger(__name__)

# As much of an image's text as `describe_image` returns of a folder's image.
IMAGE_TEXT_CHARS = 4000
PROBLEM_CHARS = 500


@dataclass(frozen=True)
class ImageReading:
    attachment_id: int
    position: int
    name: str
    text: str  # by OCR
    description: str  # by the vision model
    problem: str  # why nothing was read ("" when something was)

    @property
    def read(self) -> bool:
        return bool(self.text or self.description)

    def source(self) -> NumberedSource:
        """Numbered by its place among the images; the sources it joins number it anew."""
        ocr = f"Text read from the image (OCR):\n{self.text}" if self.description and self.text else self.text
        body = "\n\n".join(part for part in (self.description, ocr) if part)
        location = describe_location({"image": self.position, "ocr": bool(self.text)})
        return NumberedSource(
            n=self.position,
            file_id=None,
            chunk_id=None,
            file_name=self.name,
            path="",
            location=location,
            text=body,
            attachment_id=self.attachment_id,
        )


@dataclass(frozen=True)
class QuestionImages:
    readings: tuple[ImageReading, ...] = ()
    usage: Usage = field(default_factory=Usage)  # the vision model's

    @property
    def sources(self) -> list[NumberedSource]:
        return [reading.source() for reading in self.readings if reading.read]

    def note(self) -> str:
        """What the answer used of the images, for its last line: "Read the text of 1 attached image."
        Empty without images."""
        read_text = sum(bool(reading.text) for reading in self.readings)
        described = sum(bool(reading.description) for reading in self.readings)
        sentences = [_read_sentence(read_text=read_text, described=described)] if read_text or described else []
        sentences += [
            _("Could not read %(name)s: %(problem)s.") % {"name": reading.name, "problem": reading.problem}
            for reading in self.readings
            if not reading.read
        ]
        return " ".join(sentences)

    def with_note(self, *, text: str, events: RunEvents) -> str:
        """`text` (already streamed) followed by the note, streamed too."""
        note = self.note()
        if not note:
            return text
        events.text(TextDelta(text=f"\n\n{note}"))
        events.flush_text()
        return f"{text}\n\n{note}"


def question_images_read(*, question: Message, events: RunEvents | None = None) -> QuestionImages:
    """The images of `question` read (or as a run read them before), in the order sent."""
    attachments = list(MessageAttachment.objects.filter(message=question).defer("data").order_by("position"))
    if not attachments:
        return QuestionImages()
    if events is not None:
        events.status("reading_images", images=len(attachments))
    vision = get_model("answer") if settings.LLM_VISION else None
    question_text = str(question.content.get("text", ""))
    readings, usage = [], Usage()
    for attachment in attachments:
        reading, spent = _read(attachment, question=question_text, vision=vision)
        readings.append(reading)
        usage += spent
    return QuestionImages(readings=tuple(readings), usage=usage)


def _read(attachment: MessageAttachment, *, question: str, vision: LLMProvider | None) -> tuple[ImageReading, Usage]:
    if attachment.read_at is not None and (vision is None or attachment.description):
        return _reading(attachment), Usage()
    data = bytes(attachment.data)
    if attachment.read_at is None:
        attachment.text, attachment.read_problem = _ocr(data=data, attachment=attachment)
    usage = Usage()
    if vision is not None:
        description, usage = _described(data=data, attachment=attachment, question=question, vision=vision)
        attachment.description = description
    attachment.read_at = timezone.now()
    attachment.save(update_fields=["text", "description", "read_problem", "read_at", "updated_at"])
    return _reading(attachment), usage


def _reading(attachment: MessageAttachment) -> ImageReading:
    return ImageReading(
        attachment_id=attachment.pk,
        position=attachment.position,
        name=attachment.name,
        text=attachment.text,
        description=attachment.description,
        problem=attachment.read_problem,
    )


def _ocr(*, data: bytes, attachment: MessageAttachment) -> tuple[str, str]:
    """(text, "") or ("", why none)."""
    try:
        text = parse_document(data=data, mime_type=attachment.mime_type, name=attachment.name).text.strip()
    except (UnsupportedDocument, ParseError) as exc:
        return "", str(exc)[:PROBLEM_CHARS]
    return text[:IMAGE_TEXT_CHARS], ""


def _described(*, data: bytes, attachment: MessageAttachment, question: str, vision: LLMProvider) -> tuple[str, Usage]:
    """The vision model's description, or "" when it cannot be had (OCR's text still stands)."""
    image = _vision_image(data=data, mime_type=attachment.mime_type)
    if image is None or len(image.data) > settings.DESCRIBE_IMAGE_MAX_BYTES:
        return "", Usage()
    try:
        response = image_description(model=vision, image=image, label=attachment.name, question=question)
    except LLMError as exc:
        logger.warning("image %s: vision model failed (%s): %s", attachment.pk, failure_kind(exc), redact(repr(exc)))
        return "", Usage()
    return response.text.strip(), response.usage


def _vision_image(*, data: bytes, mime_type: str) -> ImagePart | None:
    """The image as vision models take it: HEIC, which they do not, as JPEG."""
    if mime_type in VISION_TYPES:
        return ImagePart(media_type=mime_type, data=data)
    try:
        with Image.open(io.BytesIO(data)) as image:
            out = io.BytesIO()
            image.convert("RGB").save(out, format="JPEG", quality=90)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    return ImagePart(media_type="image/jpeg", data=out.getvalue())


def _read_sentence(*, read_text: int, described: int) -> str:
    """ "Read the text of 2 attached images and the vision model's description of them.", whole in
    each language (the parts do not translate one by one)."""
    if read_text and described == read_text:
        return ngettext(
            "Read the text of %(count)s attached image and the vision model's description of it.",
            "Read the text of %(count)s attached images and the vision model's description of them.",
            read_text,
        ) % {"count": read_text}
    if read_text and described:
        return _("Read the text of %(text)s and the vision model's description of %(described)s.") % {
            "text": _images(read_text),
            "described": _images(described),
        }
    if read_text:
        return ngettext(
            "Read the text of %(count)s attached image.", "Read the text of %(count)s attached images.", read_text
        ) % {"count": read_text}
    return ngettext(
        "Read the vision model's description of %(count)s attached image.",
        "Read the vision model's description of %(count)s attached images.",
        described,
    ) % {"count": described}


def _images(count: int) -> str:
    return ngettext("%(count)s attached image", "%(count)s attached images", count) % {"count": count}
