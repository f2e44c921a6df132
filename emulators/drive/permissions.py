"""Who can open what in the emulated Drive: permissions on an item hold for everything under it.

Tests share a folder with an email (`state.permissions.share(folder_id, "bob@example.com")`) or
take it back; permissions.list answers an item's own and inherited permissions, as Drive does.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulators.drive.state import DriveState

# The account whose Drive this is (the one that connected it): it owns every item.
OWNER_EMAIL = "drive-owner@example.com"


class DrivePermissions:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._granted: dict[str, dict[str, str]] = {}  # item id -> email -> role

    def share(self, item_id: str, email: str, *, role: str = "reader") -> None:
        with self._lock:
            self._granted.setdefault(item_id, {})[email.lower()] = role

    def unshare(self, item_id: str, email: str) -> None:
        with self._lock:
            self._granted.get(item_id, {}).pop(email.lower(), None)

    def listed(self, state: DriveState, item_id: str) -> list[dict[str, Any]]:
        """The item's permissions: the owner's, then every share on it or a folder above it."""
        found: dict[str, dict[str, Any]] = {
            OWNER_EMAIL: {"id": "perm-owner", "type": "user", "role": "owner", "emailAddress": OWNER_EMAIL}
        }
        with self._lock:
            for ancestor in _chain(state, item_id):
                for email, role in self._granted.get(ancestor, {}).items():
                    found.setdefault(
                        email, {"id": f"perm-{email}", "type": "user", "role": role, "emailAddress": email}
                    )
        return list(found.values())


def _chain(state: DriveState, item_id: str) -> list[str]:
    """The item and its folders up to the root (the first parent of each)."""
    chain, current = [], item_id
    while current and current not in chain:
        chain.append(current)
        parents = state.item(current, all_drives=True).parents
        current = parents[0] if parents else ""
    return chain
