"""Scoring on known answers: facts compared as a reader would (case, spacing, digit grouping),
ranks and every run metric worked out by hand, and the regression rule against a margin."""

from __future__ import annotations

from decimal import Decimal

import pytest

from apps.evaluation.scoring import (
    ResultFigures,
    answer_scored,
    cited_paths,
    fact_stated,
    metrics_dropped,
    normalised,
    run_metrics,
)


@pytest.mark.parametrize(
    "fact, text",
    [
        ("1,450", "INV-20917 totals 1450 EUR"),
        ("1450", "INV-20917 totals 1,450 EUR [1]."),
        ("2300", "Total due: 2,300.00 EUR"),
        ("12300 dollars", "withheld 12\u202f300 dollars"),  # a narrow no-break space groups the digits
        ("1450", "1'450 CHF"),
        ("June   1", "renews on\njune 1."),
        ("Northwind Mutual", "with NORTHWIND mutual"),
        ("0.5 %", "a rate of 0.50 %"),
    ],
)
def test_a_fact_is_found_however_it_is_written(fact, text):
    assert fact_stated(fact=fact, normalised_text=normalised(text))


@pytest.mark.parametrize(
    "fact, text",
    [
        ("1450", "the total is 14500 EUR"),
        ("1450", "the total is 21450 EUR"),
        ("June 1", "renews on June 10"),
        ("two eggs", "twelve eggs"),
        ("32024", "on March 3 2024"),  # a space between numbers is no digit group
        ("12345", "1,2345"),
        ("", "anything"),
    ],
)
def test_a_fact_is_not_found_inside_another_word_or_number(fact, text):
    assert not fact_stated(fact=fact, normalised_text=normalised(text))


def test_cited_files_keep_citation_order_once_each():
    citations = [
        {"n": 1, "file_id": 7, "path": "b.md"},
        {"n": 2, "file_id": 3, "path": "a.md"},
        {"n": 3, "file_id": 7, "path": "b.md"},
        {"n": 4, "file_id": None, "path": "", "attachment_id": 2},  # an image of the question
    ]
    assert cited_paths(citations) == ["b.md", "a.md"]


def figures(expected_files, expected_facts, *, text, cited, found_nothing=False, ms=100, tokens=0, cost="0"):
    scored = answer_scored(
        text=text,
        cited_files=cited,
        expected_files=expected_files,
        expected_facts=expected_facts,
        found_nothing=found_nothing,
    )
    return ResultFigures(expected_files, expected_facts, scored, ms, tokens, Decimal(cost))


def test_the_run_metrics_on_known_answers():
    results = [
        # The expected file cited first; one of its two facts stated.
        figures(["a.md"], ["June 1", "1,284"], text="Renews June 1 [1].", cited=["a.md"], ms=100, tokens=30),
        # Cited third, after two other files; its fact stated.
        figures(["b.md"], ["two eggs"], text="x [1] y [2] two eggs [3]", cited=["x.md", "y.md", "b.md"], ms=300),
        # Not cited at all: another file is.
        figures(["c.md"], ["March 3"], text="Something else [1].", cited=["z.md"], ms=200, tokens=12, cost="0.5"),
        # Unanswerable, and said so.
        figures([], [], text="I found nothing about dentists.", cited=[], found_nothing=True, ms=4000),
    ]

    assert [result.scored.hit_rank for result in results] == [1, 3, None, None]
    metrics = run_metrics(results)

    assert metrics == {
        "questions": 4,
        "hit_at_1": round(1 / 3, 4),  # of the three questions that expect a file
        "hit_at_5": round(2 / 3, 4),
        "mrr": round((1 + 1 / 3 + 0) / 3, 4),
        "citation_precision": 0.4,  # 2 of the 5 files cited are expected ones
        "facts_found": 0.5,  # 2 of 4 facts
        "answered_share": 0.75,
        "latency_p50": 200,  # nearest rank of 100, 200, 300, 4000
        "latency_p95": 4000,
        "tokens": 42,
        "cost": 0.5,
    }


def test_nothing_to_count_is_none_not_a_perfect_score():
    metrics = run_metrics([figures([], [], text="I found nothing.", cited=[], found_nothing=True)])

    assert metrics["hit_at_5"] is None and metrics["mrr"] is None
    assert metrics["citation_precision"] is None and metrics["facts_found"] is None
    assert metrics["answered_share"] == 0.0
    assert run_metrics([])["latency_p50"] is None


def test_a_drop_past_the_margin_is_flagged_and_one_within_it_is_not():
    previous = {"hit_at_5": 1.0, "mrr": 1.0, "facts_found": None, "citation_precision": 0.5, "answered_share": 1.0}
    now = {"hit_at_5": 0.94, "mrr": 0.95, "facts_found": 0.1, "citation_precision": 0.9, "answered_share": 0.0}

    dropped = metrics_dropped(previous=previous, now=now, margin=0.05)

    # hit@5 fell 0.06 (> 0.05); MRR exactly the margin; facts not measured before; precision rose;
    # the answered share is not one of the regression metrics.
    assert dropped == {"hit_at_5": {"previous": 1.0, "now": 0.94, "drop": 0.06}}
    assert metrics_dropped(previous=previous, now=now, margin=0.1) == {}
