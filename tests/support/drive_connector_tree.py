"""The connector suite's Drive tree: its ids and the paths a listing of it must give."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Tree:
    """Ids of a small but nested Drive folder (``root``) and its neighbours."""

    root: str
    readme: str
    inbox: str
    w2: str
    scans: str
    receipt: str
    archive: str
    old_return: str
    notes: str
    budget: str
    deck: str
    shortcut: str
    outside: str
    elsewhere: str


TREE_PATHS = {
    "readme.txt",
    "inbox/W2_2024.pdf",
    "inbox/scans/receipt.png",
    "2023/return.pdf",
    "notes",
    "budget",
    "deck",
    "outside link",
}
