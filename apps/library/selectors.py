"""Reads of folders and files, always scoped to an owner."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from apps.library.models import File, Folder


def folder_list(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Folder]:
    return Folder.objects.filter(owner_id=user.pk).order_by("-created_at")


def folder_get(*, user: AbstractBaseUser | AnonymousUser, folder_id: int) -> Folder | None:
    return folder_list(user=user).filter(pk=folder_id).first()


def file_list(*, folder: Folder, status: str | None = None, path_prefix: str | None = None) -> QuerySet[File]:
    files = File.objects.filter(folder=folder).order_by("path")
    if status:
        files = files.filter(status=status)
    if path_prefix:
        files = files.filter(path__startswith=path_prefix)
    return files.defer("embedding", "search_vector")


def file_get(*, user: AbstractBaseUser | AnonymousUser, file_id: int) -> File | None:
    return (
        File.objects.filter(pk=file_id, folder__owner_id=user.pk)
        .select_related("folder")
        .defer("embedding", "search_vector")
        .first()
    )
