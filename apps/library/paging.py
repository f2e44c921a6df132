"""Paging of a folder's files: the count stops at a cap.

At 100,000 files the paginator's exact COUNT(*) is the slow half of the first page: the page
itself walks an index and stops after 50 rows (bench/ops/files_page.py), the count reads every row
that matches. Counting at most a little past the requested page keeps the first page fast and
still says whether a next page exists; `count_exact` says whether `count` is the total.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.response import Response

from apps.core.api import Pagination

# Files counted exactly; beyond, the count says "at least".
COUNT_CAP = 1000


class CappedCountPagination(Pagination):
    count_exact = True

    def get_count(self, queryset: QuerySet[Any]) -> int:  # type: ignore[override]
        # paginate_queryset sets the request before it counts.
        offset = self.get_offset(self.request) if self.request is not None else 0
        bound = max(COUNT_CAP, offset + (self.limit or 0)) + 1
        counted = queryset.order_by()[:bound].count()
        self.count_exact = counted < bound
        return counted

    def get_paginated_response(self, data: Any) -> Response:
        response = super().get_paginated_response(data)
        response.data["count_exact"] = self.count_exact
        return response
