"""The offline answerer answers from content, not headings: sentences inherit the terms of their
heading path and file name, a heading alone is never an answer, and a comparison takes the best
content sentence of each compared file. Documents written for these tests."""

from __future__ import annotations

from collections.abc import Sequence

from apps.llm.extractive import ExtractiveProvider
from apps.llm.extractive_answer import answer
from apps.llm.extractive_text import Passage, content_sentences
from apps.llm.sources import ParsedSource, build_user_prompt, extract_citations, format_sources
from apps.llm.types import LLMResponse, Message

Q3 = ParsedSource(
    n=1,
    file_name="report-q3-2024.md",
    path="reports/report-q3-2024.md",
    location="Q3 2024 Quarterly Report",
    text="# Q3 2024 Quarterly Report\n\n"
    "Third quarter revenue reached four point two million dollars, up twelve percent on the year.\n\n"
    "## Team\n\nThe team welcomed two engineers.",
)
Q4 = ParsedSource(
    n=2,
    file_name="report-q4-2024.md",
    path="reports/report-q4-2024.md",
    location="Q4 2024 Quarterly Report",
    text="Q4 2024 Quarterly Report\n\n"
    "Fourth quarter revenue came to five point one million dollars, a record for the company.\n\n"
    "Travel costs were kept flat.",
)
# A chunk from the middle of a long report: its heading is only in the location (the heading path).
Q4_OUTLOOK = ParsedSource(
    n=3,
    file_name="report-q4-2024.md",
    path="reports/report-q4-2024.md",
    location="Q4 2024 Quarterly Report > Outlook",
    text="The board expects growth to slow in the first half of next year.",
)
RECIPE = ParsedSource(
    n=4,
    file_name="soup.md",
    path="recipes/soup.md",
    location="Tomato soup",
    text="# Tomato soup\n\nSimmer the tomatoes for twenty minutes.",
)


def ask(question: str, sources: Sequence[ParsedSource]) -> LLMResponse:
    prompt = build_user_prompt(question=question, sources_block=format_sources(sources))
    return ExtractiveProvider().complete(messages=[Message.user(prompt)])


def test_a_comparison_answers_with_each_reports_figure_not_their_titles():
    response = ask("Compare the Q3 and Q4 reports", [Q3, Q4, RECIPE])

    assert "Quarterly Report" not in response.text  # no title line is an answer
    assert "Third quarter revenue reached four point two million dollars" in response.text
    assert "Fourth quarter revenue came to five point one million dollars" in response.text
    assert set(extract_citations(response.text)) == {1, 2}
    assert "tomatoes" not in response.text


def test_a_sentence_inherits_its_heading_path_from_the_location():
    response = ask("What does the Q4 report say about the outlook?", [Q3, Q4_OUTLOOK])

    assert response.text.startswith("The board expects growth to slow in the first half of next year [3].")


def test_a_sentence_inherits_the_markdown_heading_above_it():
    response = ask("How much revenue in Q3?", [Q4, Q3])

    assert response.text.startswith("Third quarter revenue reached four point two million dollars")
    assert extract_citations(response.text)[0] == 1


def test_a_heading_alone_is_never_an_answer():
    only_titles = Passage(n=1, text="# Annual Budget 2025\n\nBudget Overview", heading="budget.md")

    assert content_sentences(only_titles) == []
    assert answer(question="What is the 2025 budget?", passages=[only_titles]).picks == ()


def test_headings_are_told_from_short_sentences():
    passage = Passage(n=1, text="Results\n\nSales grew.\n\nWe hired a designer in May.")

    sentences = content_sentences(passage)

    assert [sentence.text for sentence in sentences] == ["Sales grew.", "We hired a designer in May."]
    assert all("result" in sentence.inherited for sentence in sentences)


# A receipt as OCR reads it: a priced line per item, none ending a sentence.
RECEIPT = ParsedSource(
    n=1,
    file_name="receipt.jpg",
    path="",
    location="image 1, text read by OCR",
    text="HARBOR MARKET\n12 Quay Street, Portsmouth\n\nCoffee beans 1kg 18.90\nOat milk x2 3.80\n"
    "Sourdough loaf 4.50\nTOTAL EUR 27.20\n\nCard ending 4821 APPROVED",
)


def test_each_priced_line_of_a_receipt_is_a_sentence_of_its_own():
    assert ask("What was the total on this receipt?", [RECEIPT]).text == "TOTAL EUR 27.20 [1]."
    assert ask("How much were the coffee beans?", [RECEIPT]).text == "Coffee beans 1kg 18.90 [1]."
    # One price in prose is no list of them: the paragraph stays as it is.
    (sentence,) = content_sentences(Passage(n=1, text="We paid for lunch\nat noon 12.50"))
    assert sentence.text == "We paid for lunch at noon 12.50"
