"""What the offline answerer computes rather than quotes: which of two dates comes first and the days
between, how long something took from the dates it started and ended, and the sum of like amounts
when the question asks for a total, each figure cited. Documents written for these tests."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils import translation

from apps.llm.extractive import ExtractiveProvider
from apps.llm.extractive_dates import whole_dates
from apps.llm.sources import ParsedSource, build_user_prompt, format_sources
from apps.llm.types import Message


def source(n: int, path: str, text: str) -> ParsedSource:
    return ParsedSource(n=n, file_name=path.rsplit("/", 1)[-1], path=path, location="", text=text)


def ask(question: str, sources: Sequence[ParsedSource]) -> str:
    prompt = build_user_prompt(question=question, sources_block=format_sources(sources))
    return ExtractiveProvider().complete(messages=[Message.user(prompt)]).text


ENERGY = source(
    1,
    "contracts/energy.md",
    "# Energy contract\n\nSigned on 1 September 2023 for two years, fixed price.\n\n"
    "The contract ends on 31 August 2025; after that the variable tariff applies.",
)
PHONE = source(2, "contracts/phone.md", "# Phone contract\n\nThe contract runs until 14 November 2025, then monthly.")
BOILER = source(
    3,
    "house/boiler.md",
    "# Boiler\n\nHeatwell services it every September; the contract costs 14 EUR a month.",
)


def test_which_of_two_named_contracts_ends_first_and_the_days_apart_each_date_cited():
    text = ask(
        "Which contract ends first, the energy contract or the phone contract, and how many days apart?",
        [ENERGY, PHONE, BOILER],
    )

    assert (
        text == "energy.md comes first: 31 August 2025 [1] against 14 November 2025 for phone.md [2], 75 days earlier."
    )


def test_the_later_date_comes_first_when_asked_and_a_thing_without_a_whole_date_is_no_side():
    # The boiler's contract is a contract too, but "every September" is no date to count from.
    text = ask("Which contract ends later?", [ENERGY, PHONE, BOILER])

    assert text == "phone.md comes last: 14 November 2025 [2] against 31 August 2025 for energy.md [1], 75 days later."


def test_the_date_a_clause_labels_with_the_questions_word_is_the_one_compared():
    lease = source(
        1, "office/lease.md", "# Office lease\n\nThe lease starts on 1 April 2023 and ends on 31 March 2026."
    )
    printer = source(2, "office/printer-lease.md", "# Printer lease\n\nThe printer lease ends on 30 September 2025.")

    text = ask("Which ends later, the office lease or the printer lease?", [lease, printer])

    assert text.startswith("lease.md comes last: 31 March 2026 [1] against 30 September 2025 for printer-lease.md [2]")
    assert "182 days later" in text and "1 April 2023" not in text


RENOVATION = source(
    1,
    "house/kitchen.md",
    "# Kitchen renovation\n\nThe builders started on 3 March 2025 and handed the kitchen over on 28 March 2025. "
    "The oven came late, so we cooked on a camping stove for the first ten days.",
)


def test_how_long_something_took_is_the_days_between_its_start_and_its_end():
    text = ask("How long did the kitchen renovation take?", [RENOVATION])

    assert text == "From 3 March 2025 to 28 March 2025 [1] is 25 days."  # not "the first ten days"


def test_a_span_given_by_two_sentences_cites_the_file_once_and_a_stated_duration_is_quoted():
    trip = source(
        1,
        "travel/berlin.md",
        "# Berlin fair\n\n- Outbound: train from Utrecht to Berlin on 12 May 2025 at 07:05.\n"
        "- Return: train from Berlin on 16 May 2025 at 16:34.",
    )
    said = source(1, "travel/rome.md", "# Rome\n\nFive days in Rome, from 3 to 7 April 2025.")

    assert ask("How long is the Berlin trip?", [trip]) == "From 12 May 2025 to 16 May 2025 [1] is 4 days."
    assert ask("How long is the Rome trip?", [said]) == "Five days in Rome, from 3 to 7 April 2025 [1]."


def test_whole_dates_complete_a_range_and_leave_a_day_without_a_year():
    assert [dated.written for dated in whole_dates("Eight days, from 14 to 21 June 2024.")] == [
        "14 June 2024",
        "21 June 2024",
    ]
    assert [dated.day.isoformat() for dated in whole_dates("From 3 March to 28 March 2025, then 2025-11-05.")] == [
        "2025-03-03",
        "2025-03-28",
        "2025-11-05",
    ]
    assert whole_dates("We fly out on 3 October and come back on 15 October.") == []


def bill(n: int, name: str, lines: str) -> ParsedSource:
    # Every bill repeats the same billing period line: each one's still counts for it.
    return source(
        n,
        f"bills/2025-01-{name}.txt",
        f"{name.title()} bill\n\nBilling period: 1 January 2025 to 31 January 2025\n{lines}",
    )


ELECTRICITY = bill(
    1, "electricity", "Electricity used ........ 98.80 EUR\nRebate ........ -12.40 EUR\nAmount due ........ 86.40 EUR"
)
WATER = bill(
    2, "water", "Water used ........ 17.10 EUR\nFixed charge ........ 14.65 EUR\nAmount due ........ 31.75 EUR"
)
INTERNET = bill(3, "internet", "Fibre 500 Mbit/s ........ 45.00 EUR\nAmount due ........ 45.00 EUR")


def test_a_total_of_like_amounts_is_their_sum_each_cited():
    text = ask("What did the three bills for January cost in total?", [ELECTRICITY, WATER, INTERNET])

    assert text == (
        "Together they come to 163.15 EUR: 86.40 EUR for 2025-01-electricity.txt [1], 31.75 EUR for "
        "2025-01-water.txt [2] and 45.00 EUR for 2025-01-internet.txt [3]."
    )
    assert "163.15 EUR" in ask("How much did the January bills come to altogether?", [ELECTRICITY, WATER, INTERNET])


def test_no_sum_of_fewer_things_than_counted_of_currencies_or_of_rates():
    counted = ask("What did the four bills for January cost in total?", [ELECTRICITY, WATER, INTERNET])
    pounds = source(
        3, "bills/2025-01-internet.txt", "Internet bill\n\nBilling period: January 2025\nAmount due: £45.00"
    )
    currencies = ask("What did the bills for January cost in total?", [ELECTRICITY, pounds])
    rent = source(1, "home/rent.md", "# Rent\n\nThe rent is 1,200 EUR a month.")
    parking = source(2, "home/parking.md", "# Parking\n\nThe parking permit is 45 EUR a month.")
    rates = ask("What do the rent and the parking cost in total?", [rent, parking])

    assert "Together" not in counted and "163.15" not in counted and "131.40" not in counted
    assert "different currencies, so I have not added them up" in currencies and "£45.00 for" in currencies
    assert "Together" not in rates and "1,245" not in rates


def test_a_total_of_one_thing_is_its_own_total_not_a_sum_of_files():
    invoice = source(
        1, "inbox/INV-7.txt", "INVOICE INV-7\n\nDesign work ........ 900.00 EUR\nTotal due ........ 900.00 EUR"
    )
    row = source(
        2, "finance/invoices.csv", "invoice: INV-7 | client: Harbour Books | amount_eur: 900.00 | status: open"
    )

    text = ask("What is the total due of invoice INV-7?", [invoice, row])

    assert "Total due: 900.00 EUR [1]." in text and "Together" not in text and "1,800" not in text


def test_how_much_a_bill_is_is_its_amount_due_not_a_line_of_it():
    collected = source(
        1,
        "bills/2025-01-electricity.txt",
        "Vattenfall: electricity bill\n\nMeter reading: 18,442 kWh\nElectricity used, 412 kWh ........ 98.80 EUR\n"
        "Rebate ........ -12.40 EUR\nAmount due ........ 86.40 EUR\n\n"
        "The amount is collected by direct debit on 14 February 2025.",
    )

    text = ask("When is the electricity bill collected, and how much is it?", [collected])

    assert text == "Amount due: 86.40 EUR [1]. The amount is collected by direct debit on 14 February 2025 [1]."


LEASE = source(1, "home/lease.md", "# Lease\n\nThe lease started on 1 April 2023 and ended on 31 March 2026.")


def test_computed_sentences_are_said_in_the_askers_language():
    with translation.override("de"):
        dates = ask("Which contract ends later?", [ENERGY, PHONE])
        total = ask("What did the three bills for January cost in total?", [ELECTRICITY, WATER, INTERNET])
        span = ask("How long did the lease run?", [LEASE])

    assert "14 November 2025 [2]" in dates and "comes last" not in dates and "75" in dates
    assert span == "Von 1 April 2023 bis 31 March 2026 [1] sind es 1.095 Tage."  # a German thousands point
    # The sum in German digits (a decimal comma), each bill cited.
    assert total.startswith("Zusammen ergeben sie 163,15 EUR: 86,40 EUR für 2025-01-electricity.txt [1]")
    assert "Together" not in total
