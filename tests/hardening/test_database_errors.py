"""A database error inside a view is mapped to a 503 with a JSON message (DatabaseUnavailableMiddleware)."""

from __future__ import annotations

import pytest
from django.db import InterfaceError, OperationalError
from rest_framework.test import APIClient

from apps.library import apis

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_a_database_error_in_a_view_is_a_503(error, user, monkeypatch):
    def broken(self, request, *args, **kwargs):
        raise error("connection to server at 127.0.0.1 failed")

    monkeypatch.setattr(apis.FolderCollectionApi, "get", broken)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(user=user)
    response = client.get("/api/folders")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "temporarily unavailable" in response.json()["detail"]
