"""The offline answerer answers the question asked: every part of it or says which part is missing,
nothing that does not bear on it, table rows as sentences naming their columns, and citations in
the order of first use. Documents written for these tests."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils import translation

from apps.llm.extractive import NOTHING_RELEVANT, ExtractiveProvider
from apps.llm.extractive_rows import Block, blocks
from apps.llm.sources import ParsedSource, build_user_prompt, extract_citations, format_sources
from apps.llm.types import LLMResponse, Message


def source(n: int, path: str, text: str, location: str = "") -> ParsedSource:
    return ParsedSource(n=n, file_name=path.rsplit("/", 1)[-1], path=path, location=location, text=text)


def ask(question: str, sources: Sequence[ParsedSource]) -> LLMResponse:
    prompt = build_user_prompt(question=question, sources_block=format_sources(sources))
    return ExtractiveProvider().complete(messages=[Message.user(prompt)])


ROME = source(
    1,
    "travel/rome-2025.md",
    "# Rome, April 2025\n\n## Dates\nFive days in Rome, from 3 to 7 April.\n\n"
    "## Budget\nWe set aside 1,100 EUR for the trip. The hotel near Termini is already paid.",
)
README = source(
    2,
    "README.md",
    "# How this folder works\n\nEach trip gets one file under travel/. "
    "Write the budget of a trip under its own heading and update it after the trip.",
)
SCOTLAND = source(
    3,
    "travel/scotland-2024.md",
    "# Scotland, August 2024\n\n## Dates\nA road trip of nine days around the Highlands.\n\n"
    "## Budget\nThe trip budget was 2,300 EUR including the car.",
)


def test_a_comparison_answers_both_parts_and_leaves_out_the_instructions():
    response = ask("Which trip is longer, and which has the bigger budget?", [ROME, README, SCOTLAND])

    assert "Five days in Rome, from 3 to 7 April [1]." in response.text
    assert "A road trip of nine days around the Highlands [3]." in response.text
    assert "1,100 EUR" in response.text and "2,300 EUR" in response.text
    assert "[2]" not in response.text  # the README's instructions mention trips and budgets, and answer nothing
    assert "found nothing" not in response.text


def test_a_comparison_names_the_part_the_folder_does_not_answer():
    response = ask("Which trip is longer, and which hotel has the faster wifi?", [ROME, README, SCOTLAND])

    assert "Five days in Rome" in response.text and "nine days" in response.text
    assert response.text.endswith('I found nothing in this folder about "which hotel has the faster wifi".')
    assert "[2]" not in response.text


BOILER = source(
    1,
    "house/boiler.md",
    "# Boiler\n\nThe boiler is a Vaillant ecoTEC installed in 2019. Heatwell services it every September. "
    "The pressure should stay between 1.2 and 1.5 bar.",
)
HOUSE_RULES = source(
    2,
    "house/rules.md",
    "# House rules\n\nCall Heatwell before touching the boiler. Keep the manuals in the kitchen drawer.",
)
SOUP = source(3, "recipes/soup.md", "# Soup\n\nSimmer the leeks for twenty minutes every time.")


def test_a_lookup_is_answered_by_its_sentence_alone():
    response = ask("When is the boiler serviced?", [BOILER, HOUSE_RULES, SOUP])

    assert response.text == "Heatwell services it every September [1]."


def test_a_question_about_nothing_in_the_folder_says_so():
    assert ask("What is the wifi password?", [BOILER, HOUSE_RULES, SOUP]).text == NOTHING_RELEVANT


BOOKS = source(
    1,
    "books.csv",
    "Columns: title, author, year_read, rating, notes\n"
    "title: The Overstory | author: Richard Powers | year_read: 2023 | rating: 5 | notes: Lent to Sam\n"
    "title: Piranesi | author: Susanna Clarke | year_read: 2025 | rating: 4 | notes: Second copy given to Mum.\n"
    "title: Klara and the Sun | author: Kazuo Ishiguro | year_read: 2024 | rating: 3 | notes: Book club pick\n",
)


def test_a_table_row_is_told_as_a_sentence_naming_its_columns():
    response = ask("What rating did I give Piranesi?", [BOOKS])

    assert response.text == (
        "For title Piranesi, the author is Susanna Clarke, the year read is 2025, the rating is 4 and the notes "
        "are Second copy given to Mum [1]."
    )
    assert "|" not in response.text and "Columns" not in response.text


def test_a_table_row_is_told_in_the_askers_language_with_the_files_own_column_names():
    sheet = ["Columns: Titel, Autor, Bewertung", "Titel: Piranesi | Autor: Susanna Clarke | Bewertung: 4"]

    with translation.override("de"):
        told = list(blocks(sheet))
    with translation.override("es"):
        spanish = list(blocks(sheet))

    assert told == [Block("Für Titel Piranesi gilt: Autor Susanna Clarke und Bewertung 4.", told=True)]
    assert spanish == [Block("Para Titel Piranesi: Autor Susanna Clarke y Bewertung 4.", told=True)]


def test_rows_matching_alike_are_all_told():
    response = ask("Which books did I rate 5 or 3?", [BOOKS])

    assert "For title The Overstory" in response.text and "For title Klara and the Sun" in response.text
    assert "Piranesi" not in response.text


def test_a_sheet_name_is_context_and_json_fields_make_one_record():
    sheet = ["Sheet: Kilns", "Columns: kiln, max_temp_c", "kiln: Big Bertha | max_temp_c: 1300"]
    contacts = ["contacts[0].name: Maria Okafor", "contacts[0].phone: +1 555 0147", "contacts[1].name: Joana Silva"]
    fields = ["Employer: Contoso Ltd", "Box 2 Federal income tax withheld: 12,480.00"]

    assert list(blocks(sheet[1:])) == [Block("For kiln Big Bertha, the max temp c is 1300.", told=True)]
    assert list(blocks(contacts)) == [
        Block("For name Maria Okafor, the phone is +1 555 0147.", told=True),
        Block("The name is Joana Silva.", told=True),
    ]
    assert list(blocks(fields)) == [
        Block("Employer: Contoso Ltd.", told=True),
        Block("Box 2 Federal income tax withheld: 12,480.00.", told=True),
    ]
    response = ask(
        "What is the maximum temperature of the Big Bertha kiln?", [source(1, "kilns.xlsx", "\n".join(sheet))]
    )
    assert response.text == "For kiln Big Bertha, the max temp c is 1300 [1]."


W2 = source(1, "taxes/W2_2024.pdf", "Employer: Contoso Ltd\nBox 2 Federal income tax withheld: 12,480.00")
LEASE = source(2, "home/lease.md", "# Lease\n\nThe flat is rented from Harbor View Properties since 2021.")
BUDGET = source(3, "finance/budget.md", "# Budget\n\nThe rent is 1,200 EUR a month, paid on the 2nd.")


def test_citations_come_in_the_order_of_first_use():
    # The rent's best sentence is in source 3 and the tax's in source 1: the answer quotes 1 first.
    response = ask("How much is the rent, and how much federal tax was withheld?", [W2, LEASE, BUDGET])

    assert extract_citations(response.text) == [1, 3]
    assert response.text == (
        "Box 2 Federal income tax withheld: 12,480.00 [1]. The rent is 1,200 EUR a month, paid on the 2nd [3]."
    )


FORM_2024 = source(
    1, "taxes/1099-2024.pdf", "Form 1099-NEC 2024\nPayer: Northwind Studio\nBox 1 Nonemployee compensation: 2,430.00"
)
FORM_2023 = source(
    2, "taxes/1099-2023.pdf", "Form 1099-NEC 2023\nPayer: Northwind Studio\nBox 1 Nonemployee compensation: 1,980.00"
)


def test_a_forms_title_line_is_the_context_of_its_fields():
    response = ask("What was the nonemployee compensation on the 2024 1099-NEC?", [FORM_2023, FORM_2024])

    assert response.text == "Box 1 Nonemployee compensation: 2,430.00 [1]."


POTTERY = source(1, "classes/pottery.md", "# Pottery evenings\n\nSix sessions of two hours each. The price is 240 EUR.")
DRAWING = source(2, "classes/drawing.md", "# Drawing weekend\n\nTwo days of five hours. The price is 180 EUR.")
RENT = source(3, "finance/rent.md", "# Rent\n\nThe studio rent is 1,950 EUR a month.")


def test_a_comparison_of_two_named_things_answers_from_each():
    response = ask("Which costs more, the pottery evenings or the drawing weekend?", [POTTERY, RENT, DRAWING])

    assert response.text == "pottery.md is more expensive: 240 EUR [1] against 180 EUR for drawing.md [2], 60 EUR more."


INVOICE_ROWS = source(
    1,
    "finance/invoices-2024.csv",
    "Columns: invoice, client, amount_eur, status\n"
    "invoice: INV-20917 | client: Northwind Studio | amount_eur: 1450.00 | status: paid",
)
INVOICE_TEXT = source(
    2,
    "inbox/invoice-INV-20931.txt",
    "INVOICE INV-20931\n\nFrom: Alex Morgan Design\nDate: 9 December 2024\n\n"
    "Website illustrations, 12 pieces ........ 2,300.00 EUR\nTotal due ........................ 2,300.00 EUR",
)


def test_a_comparison_of_amounts_states_the_larger_and_the_difference_citing_each_side():
    response = ask("Compare the invoices: which is larger and by how much?", [INVOICE_ROWS, INVOICE_TEXT])

    assert (
        response.text
        == "INV-20931 is larger: 2,300.00 EUR [2] against 1,450.00 EUR for INV-20917 [1], 850.00 EUR more."
    )


def test_cheaper_smaller_and_difference_are_computed_the_way_they_are_asked():
    cheaper = ask("Which invoice is cheaper?", [INVOICE_ROWS, INVOICE_TEXT]).text
    difference = ask("What is the difference between the invoices?", [INVOICE_ROWS, INVOICE_TEXT]).text
    more = ask("How much more is the larger invoice?", [INVOICE_ROWS, INVOICE_TEXT]).text

    assert cheaper == "INV-20917 is cheaper: 1,450.00 EUR [1] against 2,300.00 EUR for INV-20931 [2], 850.00 EUR less."
    assert "850.00 EUR more" in difference and "850.00 EUR more" in more


def test_amounts_in_different_currencies_are_stated_and_not_subtracted():
    dollars = source(3, "inbox/invoice-INV-30001.txt", "INVOICE INV-30001\n\nTotal due ........ $1,200.00")

    response = ask("Which invoice is larger?", [INVOICE_TEXT, dollars])

    assert "2,300.00 EUR [2]" in response.text and "$1,200.00 [3]" in response.text
    assert "different currencies" in response.text and "more" not in response.text


def test_amounts_alike_are_said_to_be_the_same_each_cited():
    again = source(3, "inbox/invoice-INV-20940.txt", "INVOICE INV-20940\n\nTotal due ........ 1,450.00 EUR")

    response = ask("Which invoice is larger?", [INVOICE_ROWS, again])

    assert response.text == "They are the same: 1,450.00 EUR for INV-20940 [3] and 1,450.00 EUR for INV-20917 [1]."


def test_a_comparison_is_said_in_the_askers_language_with_its_digits_and_citations():
    dollars = source(3, "inbox/invoice-INV-30001.txt", "INVOICE INV-30001\n\nTotal due ........ $1,200.00")
    again = source(3, "inbox/invoice-INV-20940.txt", "INVOICE INV-20940\n\nTotal due ........ 1,450.00 EUR")
    with translation.override("de"):
        larger = ask("Compare the invoices: which is larger and by how much?", [INVOICE_ROWS, INVOICE_TEXT]).text
        currencies = ask("Which invoice is larger?", [INVOICE_TEXT, dollars]).text
        same = ask("Which invoice is larger?", [INVOICE_ROWS, again]).text
    with translation.override("fr"):
        cheaper = ask("Which invoice is cheaper?", [INVOICE_ROWS, INVOICE_TEXT]).text

    assert larger == "INV-20931 ist größer: 2.300,00 EUR [2] gegenüber 1.450,00 EUR für INV-20917 [1], 850,00 EUR mehr."
    assert currencies == (
        "INV-20931 beträgt 2.300,00 EUR [2] und INV-30001 beträgt $1.200,00 [3]: "
        "Sie lauten auf verschiedene Währungen, daher habe ich sie nicht verglichen."
    )
    assert same == "Sie sind gleich hoch: 1.450,00 EUR für INV-20940 [3] und 1.450,00 EUR für INV-20917 [1]."
    # French groups thousands with a no-break space and writes one before its colon.
    assert cheaper == (
        "INV-20917 est moins cher\xa0: 1\xa0450,00 EUR [1] contre 2\xa0300,00 EUR pour INV-20931 [2], "
        "850,00 EUR de moins."
    )
    assert [extract_citations(text) for text in (larger, currencies, same, cheaper)] == [[2, 1], [2, 3], [3, 1], [1, 2]]


def test_leader_dots_never_reach_an_answer():
    response = ask("What is the total due of invoice INV-20931?", [INVOICE_TEXT])

    assert "Total due: 2,300.00 EUR [2]." in response.text
    assert "...." not in response.text and "…" not in response.text


def test_a_rate_is_not_compared_with_a_one_off_price():
    wheel = source(1, "classes/wheel.md", "# Wheel course\n\nThe course costs 285 EUR, clay included.")
    rent = source(2, "finance/costs.md", "# Costs\n\nThe rent is 1,950 EUR a month.")

    response = ask("Which costs more, the wheel course or the rent?", [wheel, rent])

    assert "more expensive" not in response.text and "1,665" not in response.text
    assert "285 EUR" in response.text and "1,950 EUR a month" in response.text
