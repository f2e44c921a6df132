"""Write the binary files of sample_folder/ (pdf, docx, png); the text files are kept as they are.

.venv/bin/python bench/common/make_sample_files.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from tests.support.documents import docx_bytes, pdf_bytes
from tests.support.images import png, receipt_image

SAMPLE = ROOT / "sample_folder"


FILES: dict[str, bytes] = {
    "inbox/W2_2024.pdf": pdf_bytes(
        [
            "Form W-2 Wage and Tax Statement 2024\nEmployer: Contoso Ltd, 1 Harbor Way\nEmployee: Alex Morgan\n"
            "Box 1 Wages, tips, other compensation: 82,150.00\nBox 2 Federal income tax withheld: 12,480.00\n"
            "Box 12a Code D: 7,000.00",
            "Copy B - To Be Filed With Employee's FEDERAL Tax Return\nThis information is being furnished to the "
            "Internal Revenue Service.",
        ]
    ),
    "finance/bank-statement-2024-12.pdf": pdf_bytes(
        [
            "Harbor Savings Bank - Statement December 2024\nAccount holder: Alex Morgan\n"
            "Opening balance: 6,420.18 EUR\n02 Dec Rent Harbor View Properties -1,200.00\n"
            "09 Dec Northwind Studio INV-20924 +980.00\n15 Dec Utilities -176.40",
            "20 Dec Groceries -143.65\n28 Dec Transfer to emergency fund -725.00\nClosing balance: 5,155.13 EUR",
        ]
    ),
    "work/q4-2024-report.docx": docx_bytes(
        [
            ("Title", "Q4-2024 report: Project Atlas"),
            ("Heading 1", "Summary"),
            (
                "",
                "Atlas launched on 16 December 2024, two weeks after the original date, following the "
                "accessibility review. Onboarding completion rose from 61% to 78%.",
            ),
            ("Heading 1", "Metrics"),
            (
                "",
                "Time to first project dropped from 9 minutes to 4 minutes. Support tickets about sign-up fell by 35%.",
            ),
            ("Heading 2", "Costs"),
            ("", "The project stayed within its 18,000 EUR budget; illustrations were billed on INV-20931."),
        ],
        table=[["Metric", "Q3-2024", "Q4-2024"], ["Completion", "61%", "78%"], ["Tickets", "212", "138"]],
    ),
    "inbox/lease-renewal-2025.docx": docx_bytes(
        [
            ("Title", "Lease renewal 2025"),
            (
                "",
                "Harbor View Properties and Alex Morgan agree to renew the lease of apartment 4B for "
                "1 January to 31 December 2025.",
            ),
            ("Heading 1", "Rent"),
            ("", "Monthly rent stays at 1,200 EUR, due on the 2nd of each month."),
        ]
    ),
    # A receipt as a picture: only OCR reads it.
    "inbox/receipt-photo.png": png(receipt_image()),
}


def main() -> None:
    for relative, data in FILES.items():
        path = SAMPLE / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"wrote {path.relative_to(ROOT)} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
