"""GET /api/attachments/{id}: an image attached to a question, for its conversation's owner alone
while they still have a role on the folder (anyone else: 404, as for any id of someone else's)."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.chat import selectors


class AttachmentContentApi(APIView):
    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # An <img> may accept only image types: the bytes are the answer whatever Accept says
        # (the renderer formats errors alone).
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        summary="An image attached to a question",
        description="Its bytes, as sent, with the type read from them; inline, `nosniff`, sandboxed.",
        responses={(200, "image/*"): OpenApiResponse(OpenApiTypes.BINARY)},
    )
    def get(self, request: Request, attachment_id: int) -> HttpResponse:
        attachment = selectors.attachment_get(user=request.user, attachment_id=attachment_id)
        if attachment is None:
            raise Http404(_("Attachment not found."))
        response = HttpResponse(bytes(attachment.data), content_type=attachment.mime_type)
        response["Content-Disposition"] = content_disposition_header(False, attachment.name) or "inline"
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "sandbox"
        # Never changes, and only its owner may see it: the browser keeps it, no shared cache does.
        response["Cache-Control"] = "private, max-age=86400"
        return response
