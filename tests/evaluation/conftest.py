"""Evaluation fixtures: the small indexed folder of tests/support/evaluation_folder.py, its members."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from rest_framework.test import APIClient

from apps.library.models import Folder, FolderMembership
from tests.support.evaluation_folder import evaluation_folder
from tests.support.fixtures import sdk, worker_model  # noqa: F401  (fixtures; sdk: the real SDKs against the wire stub)


@pytest.fixture
def folder(user) -> Iterator[Folder]:
    with evaluation_folder(user) as indexed:
        yield indexed


@pytest.fixture
def member_client(folder: Folder, django_user_model) -> Callable[[str], APIClient]:
    """A client of someone holding `role` on the folder ("viewer", "editor"), or none ("stranger")."""

    def client_for(role: str) -> APIClient:
        person = django_user_model.objects.create_user(username=f"{role}-person")
        if role != "stranger":
            FolderMembership.objects.create(folder=folder, user=person, role=role)
        client = APIClient()
        client.force_authenticate(user=person)
        return client

    return client_for
