"""The offline answerer in standard mode: citations numbered by first use, and "found nothing"
when the passages hold too little of the question (real PostgreSQL search, real Redis events)."""

from __future__ import annotations

import pytest

from apps.chat.answering import answer_from_sources
from apps.chat.events import RunEvents
from apps.chat.models import Message
from apps.chat.prompts import STANDARD_SYSTEM_PROMPT, NumberedSource, renumbered, standard_messages
from apps.chat.services import chat_start, run_execute
from apps.llm.base import LLMUnavailableError
from apps.llm.extractive import ExtractiveProvider
from apps.llm.sources import extract_citations
from tests.support.chat_library import add_file

pytestmark = pytest.mark.django_db

TWO_PARTS = "How much flour do pancakes need, and when does the lease renew?"
CONTACTS = [
    ("Name: Ana Silva, role: accountant, phone: 555-0101", {}),
    ("Name: Ben Okafor, role: plumber, phone: 555-0102", {}),
    ("Name: Carla Diaz, role: landlord, phone: 555-0103", {}),
]


def ask(folder, text):
    run = chat_start(user=folder.owner, folder=folder, text=text, conversation=None, agent_mode=False)
    events = []
    run = run_execute(run_id=run.pk, on_event=events.append)
    return Message.objects.get(pk=run.answer_id), events


def streamed(events) -> str:
    return "".join(event.data["text"] for event in events if event.type == "text_delta")


def source(n: int, path: str, text: str) -> NumberedSource:
    return NumberedSource(
        n=n, file_id=n, chunk_id=n, file_name=path.rsplit("/", 1)[-1], path=path, location="", text=text
    )


def test_citations_are_numbered_by_first_use_without_gaps_in_text_sources_and_stream():
    sources = [
        source(1, "recipes/pancakes.md", "Pancakes need two cups of flour, two eggs and milk."),
        source(2, "travel/passport.txt", "The passport renewal appointment is at the consulate on March 3."),
        source(3, "home/lease.md", "The lease renews on 1 June 2026 for another twelve months."),
        source(4, "finance/W2_2024.pdf", "The W-2 form for 2024 reports total wages of 84,500 dollars."),
    ]
    events: list = []

    answer = answer_from_sources(
        llm=ExtractiveProvider(),
        messages=standard_messages(history=[], question=TWO_PARTS, sources=sources),
        system=STANDARD_SYSTEM_PROMPT,
        sources=sources,
        searched=[TWO_PARTS],
        events=RunEvents(run_id="offline-renumber", on_event=events.append),
        run_id="offline-renumber",
    )

    # The answerer cited [1] and [3]; shown and kept, they are [1] and [2].
    assert "two eggs and milk [1]." in answer.text and "1 June 2026" in answer.text
    assert extract_citations(answer.text) == [1, 2]
    assert [(citation.n, citation.path) for citation in answer.citations] == [
        (1, "recipes/pancakes.md"),
        (2, "home/lease.md"),
    ]
    assert streamed(events) == answer.text


def test_a_standard_offline_answer_keeps_the_numbers_it_showed(library, settings):
    settings.LLM_PROVIDER = "extractive"
    # Ranks above the answers (it holds every word of the question) but is a heading: never quoted.
    add_file(folder=library.folder, path="notes/todo.md", chunks=[("# Pancakes flour lease renew", {})])
    add_file(folder=library.folder, path="home/lease.md", chunks=[("The lease renews on 1 June 2026.", {})])

    answer, events = ask(library.folder, TWO_PARTS)

    text, citations = answer.content["text"], answer.content["citations"]
    assert "two cups of flour" in text and "1 June 2026" in text
    assert extract_citations(text) == [1, 2] == [citation["n"] for citation in citations]
    assert [citation["path"] for citation in citations] == ["recipes/pancakes.md", "home/lease.md"]
    assert streamed(events) == text


def test_a_question_whose_key_word_no_passage_holds_finds_nothing(library, settings):
    settings.LLM_PROVIDER = "extractive"
    add_file(folder=library.folder, path="personal/contacts.txt", chunks=CONTACTS)

    answer, events = ask(library.folder, "What is the name of my dentist?")

    text = answer.content["text"]
    assert text.startswith('I found nothing in this folder about "dentist".\n\nSearched this folder for “What is')
    assert "personal/contacts.txt" in text  # what was read, named
    assert "Ana Silva" not in text and answer.content["citations"] == []
    assert streamed(events) == text


def test_the_contacts_still_answer_a_question_they_hold(library, settings):
    settings.LLM_PROVIDER = "extractive"
    add_file(folder=library.folder, path="personal/contacts.txt", chunks=CONTACTS)

    answer, _ = ask(library.folder, "What is the phone number of the plumber?")

    assert "555-0102" in answer.content["text"]
    assert answer.content["citations"][0] == {**answer.content["citations"][0], "n": 1, "path": "personal/contacts.txt"}


def test_the_way_a_question_is_put_is_not_what_it_asks_about(library, settings):
    settings.LLM_PROVIDER = "extractive"
    invoices = [("Invoice INV-1 is 1,450.00 EUR, paid.", {}), ("Invoice INV-2 is 2,300.00 EUR, due.", {})]
    add_file(folder=library.folder, path="finance/invoices.txt", chunks=invoices)

    # "larger" and "how much" are in no passage; "invoice" is, and is all the question looks up.
    answer, _ = ask(library.folder, "Which invoice is larger, and by how much?")

    assert "found nothing" not in answer.content["text"] and "2,300.00" in answer.content["text"]
    assert answer.content["citations"][0]["path"] == "finance/invoices.txt"


def test_after_a_model_failure_the_offline_answer_is_judged_and_renumbered_too(library, scripted):
    add_file(folder=library.folder, path="personal/contacts.txt", chunks=CONTACTS)
    scripted.push(LLMUnavailableError("upstream 503"))

    missing, _ = ask(library.folder, "What is the name of my dentist?")

    assert missing.metadata["model"] == "extractive" and missing.metadata["notice"]
    assert missing.content["text"].startswith('I found nothing in this folder about "dentist".')
    assert missing.content["citations"] == []


def test_renumbered_sources_follow_first_use_and_keep_the_uncited_after():
    sources = [source(n, f"f{n}.md", f"text {n}") for n in range(1, 5)]

    text, numbered = renumbered(answer="B [3]. A [1, 3]. Unknown [7].", sources=sources)

    assert text == "B [1]. A [2, 1]. Unknown [7]."
    assert [(s.n, s.path) for s in numbered] == [(1, "f3.md"), (2, "f1.md"), (3, "f2.md"), (4, "f4.md")]


def test_comparing_two_invoices_computes_the_larger_and_the_difference_citing_each(library, settings):
    settings.LLM_PROVIDER = "extractive"
    row = "invoice: INV-20917 | client: Northwind Studio | amount_eur: 1450.00 | status: paid"
    add_file(folder=library.folder, path="finance/invoices-2024.csv", chunks=[(row, {})])
    invoice = (
        "INVOICE INV-20931\n\nFrom: Alex Morgan Design\nDate: 9 December 2024\n\n"
        "Website illustrations, 12 pieces ........ 2,300.00 EUR\nTotal due ........................ 2,300.00 EUR"
    )
    add_file(folder=library.folder, path="inbox/invoice-INV-20931.txt", chunks=[(invoice, {})])

    answer, events = ask(library.folder, "Compare the invoices: which is larger and by how much?")

    text, citations = answer.content["text"], answer.content["citations"]
    assert text == "INV-20931 is larger: 2,300.00 EUR [1] against 1,450.00 EUR for INV-20917 [2], 850.00 EUR more."
    assert [citation["path"] for citation in citations] == ["inbox/invoice-INV-20931.txt", "finance/invoices-2024.csv"]
    assert streamed(events) == text


def test_a_thing_whose_words_the_folder_holds_only_apart_is_not_found(library, settings):
    settings.LLM_PROVIDER = "extractive"
    bill = [("Electricity bill, January 2025. Amount due: 86.40 EUR.", {})]
    add_file(folder=library.folder, path="bills/2025-01-electricity.txt", chunks=bill)
    contract = [("Fixed price for electricity and no gas connection, signed in 2023.", {})]
    add_file(folder=library.folder, path="contracts/energy.md", chunks=contract)

    # "gas", "bill" and "January" are all in the folder, but no file holds "gas" with the others.
    answer, _ = ask(library.folder, "How much was the gas bill in January?")

    assert answer.content["text"].startswith('I found nothing in this folder about "gas".')
    assert "86.40" not in answer.content["text"] and answer.content["citations"] == []


def test_a_verb_the_folder_words_otherwise_still_gets_an_answer(library, settings):
    settings.LLM_PROVIDER = "extractive"
    workshop = [("The glaze workshop of two days is led by the guest teacher Tomasz Wojcik.", {})]
    add_file(folder=library.folder, path="classes/glaze-workshop.md", chunks=workshop)
    add_file(folder=library.folder, path="suppliers.csv", chunks=[("supplier: Potclays | lead_time_days: 5", {})])

    # "leads" is only in the suppliers' lead time, apart from the workshop: a verb, not what is asked about.
    answer, _ = ask(library.folder, "Who leads the glaze workshop?")

    assert "Tomasz Wojcik" in answer.content["text"]
