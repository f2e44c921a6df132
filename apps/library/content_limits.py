"""Bounds on the content endpoint: a per-user rate every web process shares, and a per-process
bound on downloads from a remote source in flight."""

from __future__ import annotations

import threading
from typing import cast

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.utils.connection import ConnectionProxy
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.throttling import ScopedRateThrottle

from apps.library.models import File, SourceKind

# How long a refused download is told to wait: a PDF viewer's range takes well under this.
_BUSY_RETRY_SECONDS = 2


class ContentThrottle(ScopedRateThrottle):
    """Scope `content`: counted in Redis, not in one process's memory, so that a rate holds
    whichever web process answers."""

    cache = cast(BaseCache, ConnectionProxy(caches, "shared"))


class DownloadsBusy(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "Too many files are being downloaded from their source right now; try again shortly."
    default_code = "downloads_busy"
    wait = _BUSY_RETRY_SECONDS  # DRF's exception handler turns it into Retry-After


class DownloadSlot:
    """One download's place among the process's `CONTENT_MAX_CONCURRENT`, held until its response closes."""

    def __init__(self, slots: _Slots | None) -> None:
        self._slots = slots

    def release(self) -> None:
        slots, self._slots = self._slots, None  # a response may close twice
        if slots is not None:
            slots.give_back()


class _Slots:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken = 0

    def take(self) -> DownloadSlot:
        # Refused at once, never queued: under ASGI every synchronous view shares one thread, and a
        # view waiting here would stall all of them.
        with self._lock:
            if self._taken >= settings.CONTENT_MAX_CONCURRENT:
                raise DownloadsBusy()
            self._taken += 1
        return DownloadSlot(self)

    def give_back(self) -> None:
        with self._lock:
            self._taken -= 1


_slots = _Slots()


def download_slot_take(*, file: File) -> DownloadSlot:
    """A slot for reading `file` from its source; raises DownloadsBusy (503) when none is free.
    A local file is read from this machine's disk, with no remote download to bound: its slot is free."""
    if file.folder.source == SourceKind.LOCAL:
        return DownloadSlot(None)
    return _slots.take()
