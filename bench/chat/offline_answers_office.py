"""The held-out questions of `offline_answers.py` over `answer_folders/office` (a two-person design
studio's invoices, bills, receipts, lease, contracts, payslips, a trip and meeting notes), written
with the folder for issue 42 item 4 before the answerer's dates and sums were: lookups,
comparisons of amounts and of dates, durations, sums, and questions the folder cannot answer
though some of their words are in it (the right answer says it found nothing).
"""

from __future__ import annotations

from bench.chat.offline_answers_questions import MISSING, Question, q

BILLS = {"bills/2025-03-electricity.txt", "bills/2025-03-water.txt", "bills/2025-03-internet.txt"}
PAYSLIPS = {"payroll/payslip-2025-01-anna-de-vries.txt", "payroll/payslip-2025-02-anna-de-vries.txt"}
OPEN_INVOICES = {"invoices/INV-2025-015.txt", "invoices/INV-2025-016.txt"}
RECEIPTS = {"receipts/2025-02-11-stationery.txt", "receipts/2025-03-04-printer-toner.txt"}
CONTRACTS = {"contracts/cleaning-contract.md", "contracts/printer-lease.md"}
LEASE = {"lease/office-lease.md"}
MEETINGS = {"meetings/2025-02-10-team-meeting.md", "meetings/2025-03-10-team-meeting.md"}
TRIP = {"travel/berlin-design-fair-2025.md"}

OFFICE_QUESTIONS: list[Question] = [
    # Lookups.
    q("office", "When is invoice INV-2025-015 due?", ["16 March 2025"], {"invoices/INV-2025-015.txt"}),
    q("office", "What is the booking reference of the Berlin hotel?", ["AMN-55172"], TRIP),
    q("office", "How much is the office rent and when is it due?", ["1,400", "first working day"], LEASE),
    q(
        "office",
        "How much was Anna's net pay in February?",
        ["3,121.20"],
        {"payroll/payslip-2025-02-anna-de-vries.txt"},
        wrong=("2,787.60",),
    ),
    q("office", "What did the printer toner cost?", ["148.00"], {"receipts/2025-03-04-printer-toner.txt"}),
    q("office", "When does the new website launch?", ["28 April 2025"], MEETINGS),
    # Comparisons of dates and of amounts.
    q(
        "office",
        "Which contract ends first, the cleaning contract or the printer lease, and how many days apart?",
        ["30 June 2025", "30 September 2025", "92 days"],
        CONTRACTS,
    ),
    q(
        "office",
        "Which ends later, the office lease or the printer lease?",
        ["31 March 2026", "30 September 2025"],
        LEASE | {"contracts/printer-lease.md"},
    ),
    q("office", "Which open invoice is larger, and by how much?", ["2,450", "975", "1,475"], OPEN_INVOICES),
    q("office", "How much more was Anna's net pay in February than in January?", ["333.60"], PAYSLIPS),
    q(
        "office",
        "Which was more expensive, the stationery or the printer toner?",
        ["148.00", "27.55", "120.45"],
        RECEIPTS,
    ),
    # Durations, said or between two dates.
    q("office", "How long is the Berlin trip?", [("4 days", "4 nights", "5 days", "four nights", "five days")], TRIP),
    q("office", "By how many days was the website launch moved?", ["14 days"], MEETINGS),
    q(
        "office",
        "How many days are there between the date of invoice INV-2025-015 and its due date?",
        ["30 days"],
        {"invoices/INV-2025-015.txt"},
    ),
    q("office", "How long does the office lease run?", ["1 April 2023", "31 March 2026"], LEASE),
    # Sums.
    q("office", "What did the three utility bills for March cost in total?", ["240.05"], BILLS),
    q("office", "What was Anna's net pay in January and February altogether?", ["5,908.80"], PAYSLIPS),
    q("office", "How much do the two open invoices come to in total?", ["3,425.00"], OPEN_INVOICES),
    q("office", "What did the receipts add up to in all?", ["175.55"], RECEIPTS),
    # Not in the folder, though some of the words are.
    q("office", "How much was the gas bill in March?", [MISSING], set()),
    q("office", "What is Anna's net pay for March?", [MISSING], set(), wrong=("2,787.60", "3,121.20")),
    q("office", "Which hotel did we book in Munich?", [MISSING], set(), wrong=("Hotel Amano",)),
    q("office", "What is the parking permit number of the office?", [MISSING], set()),
    q("office", "When does the cleaning company's insurance expire?", [MISSING], set(), wrong=("30 June 2025",)),
    q("office", "How much did the Paris trip cost?", [MISSING], set(), wrong=("1,900", "1,250")),
    q("office", "Who is the accountant of Brightwater Design?", [MISSING], set()),
]
