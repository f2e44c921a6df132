"""A small local folder on disk, indexed for real (hash embedder), and an evaluation set over it
whose questions each have one file that answers them: shared by the evaluation API tests and the
Evaluate page's browser test."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from apps.library.indexing import folder_index
from apps.library.models import Folder
from tests.support.servers import BASE_DIR

FILES = {
    "insurance/home-policy.md": (
        "# Home insurance\n\nThe homeowner's policy with Northwind Mutual renews on June 1.\n"
        "The annual premium is 1,284 dollars.\n"
    ),
    "recipes/pancakes.md": "# Pancakes\n\nPancakes need two cups of flour, two eggs and one and a half cups of milk.\n",
    "travel/passport.txt": "The passport renewal appointment is booked at the consulate on March 3 at 10:30.\n",
    "taxes/w2-2024.txt": (
        "Form W-2 for 2024 from Acme Corporation. Wages: 84,500 dollars. Federal income tax withheld: 12,300 dollars.\n"
    ),
}

QUESTIONS: list[dict[str, Any]] = [
    {
        "question": "When does the homeowner's policy with Northwind Mutual renew?",
        "expected_files": ["insurance/home-policy.md"],
        "expected_facts": ["June 1"],
    },
    {
        "question": "How many eggs do the pancakes need?",
        "expected_files": ["recipes/pancakes.md"],
        "expected_facts": ["two eggs"],
    },
    {
        "question": "When is the passport renewal appointment at the consulate?",
        "expected_files": ["travel/passport.txt"],
        "expected_facts": ["March 3"],
    },
    {
        "question": "How much federal income tax was withheld on the W-2?",
        "expected_files": ["taxes/w2-2024.txt"],
        # Written without the grouping comma the file has: numbers are compared as numbers.
        "expected_facts": ["12300 dollars"],
    },
]

# Excluding this folder (a folder setting) takes the pancakes out of the index: a real, worse
# configuration for the runs after it.
WORSE_EXCLUDE = "recipes/"


# More of a household's papers, for *Generate*: a bill's rows with leader dots, a budget's fields
# under headings, a table of records, a lease's sections; and boilerplate no question may come from
# (a site's navigation, a file of bare figures).
GENERATION_FILES = {
    **FILES,
    "invoices/invoice-INV-20931.txt": (
        "INVOICE INV-20931\n\nFrom: Alex Morgan Design\nDate: 9 December 2024\n\n"
        "Website illustrations, 12 pieces ........ 2,300.00 EUR\n\n"
        "Total due .................................. 2,300.00 EUR\n"
    ),
    "finance/budget-2025.md": (
        "# Household budget 2025\n\n## Fixed costs\n- Rent: 1,200 EUR per month\n"
        "- Utilities: about 180 EUR per month\n\n"
        "## Savings goals\nWe put 15% of net income into the emergency fund every month.\n"
    ),
    "finance/invoices.csv": (
        "invoice,date,client,amount_eur,status\n"
        "INV-20917,2024-10-03,Northwind Studio,1450.00,paid\n"
        "INV-20935,2024-12-20,Harbor View Properties,640.00,open\n"
    ),
    "home/lease.md": (
        "# Apartment lease\n\n## Lease renewal\n\nThe lease of apartment 4B renews every January; notice "
        "to end it is due by 1 November.\n"
    ),
    "site/navigation.txt": "Home | About | Contact | Blog\nSkip to content\n© 2024 Example Ltd. All rights reserved.\n",
    "data/readings.txt": "12 14 15 16 17\n18 19 20 21 22\n23 24 25 26 27\n",
}
BOILERPLATE_FILES = {"site/navigation.txt", "data/readings.txt"}


@contextmanager
def evaluation_folder(owner: Any, *, name: str = "Household notes", files: dict[str, str] = FILES) -> Iterator[Folder]:
    """`files` in a local folder under var/folders (a LOCAL_FOLDER_ROOTS entry), indexed inline."""
    path = BASE_DIR / "var" / "folders" / f"evaluation-{uuid.uuid4().hex[:8]}"
    for relative, text in files.items():
        (path / relative).parent.mkdir(parents=True, exist_ok=True)
        (path / relative).write_text(text)
    folder = Folder.objects.create(owner=owner, source="local", external_id=str(path), name=name)
    try:
        folder_index(folder_id=folder.pk, inline=True)
        folder.refresh_from_db()
        yield folder
    finally:
        shutil.rmtree(path, ignore_errors=True)


def set_text(questions: list[dict[str, Any]]) -> str:
    """The questions in the Evaluate page's textarea format: one block per question, `file:` and
    `fact:` lines under it, a blank line between blocks."""
    blocks = []
    for question in questions:
        lines = [question["question"]]
        lines += [f"file: {path}" for path in question["expected_files"]]
        lines += [f"fact: {fact}" for fact in question.get("expected_facts", [])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
