"""API plumbing shared by every app: the error shape, pagination."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler


class Pagination(LimitOffsetPagination):
    """Every list endpoint's paging. Capped: an unbounded `limit` went to PostgreSQL as a LIMIT
    beyond bigint (a 500), and no request should fetch a whole table at once."""

    max_limit = 500


def paginated_response(
    *, queryset: Any, serializer_class: type[BaseSerializer[Any]], request: Request, view: APIView
) -> Response:
    """One page of `queryset`, serialized, in the `{count, next, previous, results}` envelope."""
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


class ApplicationError(Exception):
    """A domain rule was broken; the message is safe to show the user."""

    status_code: int = status.HTTP_400_BAD_REQUEST

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class ConflictError(ApplicationError):
    status_code = status.HTTP_409_CONFLICT


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every error is ``{"detail": "...", ...}`` with a 4xx status and a readable message."""
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    if isinstance(exc, ApplicationError):
        return Response({"detail": exc.message, **exc.extra}, status=exc.status_code)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.ValidationError):
        response.data = {"detail": _("Invalid input."), "errors": response.data}
    return response
