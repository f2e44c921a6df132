"""Which sentences of the passages answer a question, part by part, and the answer they make.

Each part of the question (see `extractive_parts`) is answered on its own, from passages holding
enough of its terms (IDF over the sentences at hand, so a word every row repeats, like a column
name, weighs little): the best sentence, preferring one that states the kind of figure the part
asks for, plus only sentences saying the same of another thing (a second matching row) or more of
the same thing. A comparative part ("which trip is longer") takes each compared file's sentence
stating the figure asked for; when that figure is an amount or a date, the comparison is computed
(see `extractive_compare`, `extractive_dates`) and said instead of quoting both sides, and so is a
sum asked for ("the three bills ... in total"). A part asking how long, answered by two dates
rather than a stated duration, is answered with the days between them. A part nothing answers is
named as not found, rather than padded with loosely related text.

Sentences are quoted in the order of their citation numbers (and of the document within one),
so the answer's citations come in the order of first use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.translation import gettext

from apps.llm.extractive_compare import comparison, is_total, side, total
from apps.llm.extractive_dates import date_comparison, date_side, span, whole_dates
from apps.llm.extractive_parts import Kind, Part, question_parts, states
from apps.llm.extractive_text import Passage, content_sentences, covers, terms

# When a term of a part is in no source, a passage answers the part only if it holds this share of
# the part's term weight: "wifi password of the machiya" is not answered by the machiya's file.
MIN_PART_WEIGHT = 0.5
# Terms a sentence only inherits (heading, file name) count this much of terms it contains;
# the question's other terms count this much of the part's own.
INHERITED_WEIGHT = 0.5
CONTEXT_WEIGHT = 0.5
# Stating the kind of figure a part asks for (a date for "when") is worth this share of the
# part's heaviest term: enough to choose between sentences naming the same things.
KIND_BONUS = 0.5
# Another sentence joins a part's answer when it scores this close to the best (a second matching
# row), or adds a term of the part and scores at least RELATIVE_CUTOFF of the best.
TIE = 0.9
RELATIVE_CUTOFF = 0.5
MAX_PER_PART = 3
MAX_COMPARED = 4
# Figures that describe a thing compared; a bare count ("one file per trip") does not.
_FIGURE_KINDS = (Kind.DURATION, Kind.AMOUNT, Kind.DATE)


@dataclass(frozen=True)
class Pick:
    n: int
    sentence: str
    score: float
    matched: frozenset[str]  # the part's terms this sentence contains or inherits
    position: tuple[int, int]  # passage order, sentence order: where it stands in the sources
    item: str = ""  # the file it comes from


@dataclass(frozen=True)
class Answer:
    picks: tuple[Pick, ...]  # in quoting order
    missing: tuple[Part, ...]  # parts of the question nothing answers
    comparisons: tuple[str, ...] = ()  # computed comparisons, each citing its sides' numbers


@dataclass(frozen=True)
class _Unit:
    passage: Passage
    item: str  # the file it belongs to (the passage itself when unnamed)
    order: int
    position: int
    text: str
    own: frozenset[str]
    inherited: frozenset[str]


@dataclass(frozen=True)
class _Candidate:
    pick: Pick
    item: str  # the file it comes from: comparisons answer from each
    answers_kind: bool  # states the kind of figure the part asks for, or the part asks for none


def answer(*, question: str, passages: Sequence[Passage]) -> Answer:
    """The sentences answering each part of `question`; no picks at all when nothing is relevant."""
    parts = question_parts(question)
    units = _units(passages)
    if not parts or not units:
        return Answer((), ())
    question_terms = frozenset().union(*(part.terms for part in parts))
    idf = _idf(units, question_terms)
    found: dict[int, set[str]] = {}
    about: dict[str, set[str]] = {}
    for unit in units:
        found.setdefault(unit.order, set()).update(unit.own | unit.inherited)
        about.setdefault(unit.item, set()).update(unit.own | unit.inherited)
    chosen: dict[tuple[int, int], Pick] = {}
    missing: list[Part] = []
    comparisons: list[str] = []
    for part in parts:
        picks = _answer_part(part, units=units, found=found, about=about, idf=idf, question_terms=question_terms)
        if not picks:
            missing.append(part)
        computed = _compared(part, picks)
        if computed:
            comparisons.append(computed)  # it states both sides' figures: their sentences are not quoted
            continue
        for pick in picks:
            chosen.setdefault(pick.position, pick)
    if not chosen and not comparisons:
        return Answer((), ())
    ordered = sorted(chosen.values(), key=lambda pick: (pick.n, pick.position))
    # A sentence two files share (a payslip's footer) is quoted once, from the first.
    once = {pick.sentence.lower(): pick for pick in reversed(ordered)}
    return Answer(
        tuple(pick for pick in ordered if once[pick.sentence.lower()] is pick), tuple(missing), tuple(comparisons)
    )


def _compared(part: Part, picks: Sequence[Pick]) -> str | None:
    """What the part's picks compute, if they are alike: the comparison of an amount or a date
    between the files a comparative part found, the sum of their amounts, or a span of days."""
    if part.kind is Kind.DURATION and len({pick.item for pick in picks}) == 1:
        if any(states(Kind.DURATION, pick.sentence) for pick in picks):
            return None  # said in words: "twelve days", "9 nights"
        return span([(pick.n, pick.sentence) for pick in picks])
    if not part.per_thing or len({pick.item for pick in picks}) < 2:
        return None
    if part.kind is Kind.DATE and part.comparative:
        # A file stating no whole date ("every September") is not a side: there is nothing to count from.
        # What happens on the date is the part's word that names none of the things: "ends".
        event = part.terms.difference(part.subject, *part.named)
        dated = [
            date_side(n=pick.n, sentence=pick.sentence, item=pick.item, wanted=part.terms, event=event)
            for pick in picks
        ]
        return date_comparison(question=part.text, sides=[entry for entry in dated if entry is not None])
    if part.kind is not Kind.AMOUNT:
        return None
    sides = [side(n=pick.n, sentence=pick.sentence, item=pick.item, wanted=part.terms) for pick in picks]
    found = [entry for entry in sides if entry is not None]
    if len(found) < len(sides):
        return None
    return total(sides=found, count=part.count) if part.total else comparison(question=part.text, sides=found)


def _answer_part(
    part: Part,
    *,
    units: Sequence[_Unit],
    found: dict[int, set[str]],
    about: dict[str, set[str]],
    idf: dict[str, float],
    question_terms: frozenset[str],
) -> list[Pick]:
    # A part with nothing of its own to look up ("and how much is it?") looks up the question's terms.
    wanted = part.terms or question_terms
    context = question_terms - wanted
    total = sum(idf[term] for term in wanted)
    if not total:
        return []
    # A passage answers the part when it holds enough of its terms (as `covers` counts them). When a
    # term of the part is in no source at all, that term may be what the part asks about ("the wifi
    # password", "a student discount"): then the passage must also hold half the part's weight.
    unseen = wanted - set().union(*found.values())

    def answers(words: set[str]) -> bool:
        return covers(set(wanted), words) and (
            not unseen or sum(idf[term] for term in wanted & words) >= MIN_PART_WEIGHT * total
        )

    relevant = {order for order, words in found.items() if answers(words)}
    # "Which trip is longer": the things compared are the files about trips, and what settles it
    # is each one's duration, in whichever sentence of the file states it ("Five days in Rome").
    compared_items = (
        _compared_items(part, units=units, about=about, question_terms=question_terms)
        if part.per_thing and part.kind is not None
        else set()
    )
    by_item = len(compared_items) > 1
    # The question's subject, when a part does not repeat it ("when do we fly to Kyoto, and where
    # are we staying"): of the passages answering the part, those that also hold the rest of the
    # question come first, so "stay" is looked up in the Kyoto plan before the boiler manual. Not
    # for things compared: each of them is wanted, whatever else the question asks.
    subject = set() if by_item else {item for item, words in about.items() if context & words}
    heaviest = max(idf[term] for term in wanted)
    candidates: list[_Candidate] = []
    for unit in units:
        hit = wanted & (unit.own | unit.inherited)
        # How long something took is said ("twelve days"), or given by the dates it started and ended.
        figure = part.kind is not None and (
            states(part.kind, unit.text) or (part.kind is Kind.DURATION and bool(whole_dates(unit.text)))
        )
        if not (unit.item in compared_items if by_item else unit.order in relevant and hit):
            continue
        if (part.per_thing or not part.terms) and part.kind is not None and not figure:
            continue  # "which is longer" is settled by durations, "how much is it" by an amount
        score = (
            _weight(wanted, unit, idf)
            + CONTEXT_WEIGHT * _weight(context, unit, idf)
            + (KIND_BONUS * heaviest if figure else 0.0)
        )
        pick = Pick(unit.passage.n, unit.text, score, frozenset(hit), (unit.order, unit.position), unit.item)
        candidates.append(_Candidate(pick, unit.item, figure or part.kind is None))
    for preferred in (lambda candidate: candidate.item in subject, lambda candidate: candidate.answers_kind):
        # "How long is the trip" is answered by "9 nights" before "the trip to Lisbon in May".
        if any(map(preferred, candidates)):
            candidates = [candidate for candidate in candidates if preferred(candidate)]
    candidates.sort(key=lambda candidate: (-candidate.pick.score, candidate.pick.position))
    return _choose(part, candidates, by_item=by_item)


def _choose(part: Part, candidates: Sequence[_Candidate], *, by_item: bool) -> list[Pick]:
    """The part's answer among its candidates, best first: one per compared file, or the best
    sentence with those saying the same of another thing or more of the same thing."""
    if not candidates:
        return []
    if part.kind is Kind.AMOUNT and not part.per_thing:
        candidates = _total_of_lead(candidates)
    lead = candidates[0]
    best = lead.pick
    if part.per_thing:
        # Every compared file's figure; one thing compared with itself ("the cost compared to the
        # plan") is looked up like any part.
        # Of a file's sentences stating amounts alike, its total is what it is compared by.
        ranked = _total_first(candidates) if part.kind is Kind.AMOUNT else candidates
        compared = _one_per_item(ranked, floor=0.0 if by_item else RELATIVE_CUTOFF * best.score)
        if len(compared) > 1:
            return compared
    picks = [best]
    covered = set(best.matched)
    for candidate in candidates[1:]:
        pick = candidate.pick
        if len(picks) == MAX_PER_PART:
            break
        # Another row or sentence saying the same of another thing ("which invoices are open").
        alike = pick.score >= TIE * best.score and pick.matched >= best.matched
        # More of the same thing: same file, one of the best's terms, a term of the part it lacks,
        # and the kind of figure asked for, if one is.
        adds = (
            candidate.item == lead.item
            and bool(pick.matched & best.matched)
            and not pick.matched <= covered
            and candidate.answers_kind
            and pick.score >= RELATIVE_CUTOFF * best.score
        )
        if alike or adds:
            picks.append(pick)
            covered |= pick.matched
    return picks


def _compared_items(
    part: Part, *, units: Sequence[_Unit], about: dict[str, set[str]], question_terms: frozenset[str]
) -> set[str]:
    """The files a comparative (or summing) part compares: each holds all the part's terms but one
    (or those of one thing it names, "A or B"), and states a figure about the question somewhere,
    so a README that mentions trips is not a trip. Or a sentence of it names the kind of thing
    compared and states the figure asked for: "the contract runs until 14 November 2025" is a
    contract for "which contract ends later", "electricity for the kilns, 420 EUR a month" is no
    kiln for "which kiln was serviced most recently"."""
    stating = {
        unit.item
        for unit in units
        if question_terms & (unit.own | unit.inherited) and any(states(kind, unit.text) for kind in _FIGURE_KINDS)
    }
    of_kind = {
        unit.item
        for unit in units
        if part.kind is not None
        and part.subject & unit.own
        and (bool(whole_dates(unit.text)) if part.kind is Kind.DATE else states(part.kind, unit.text))
    }
    return {
        item
        for item, words in about.items()
        if (item in stating and any(_holds(needed, words) for needed in (part.terms, *part.named) if needed))
        or item in of_kind
    }


def _holds(needed: frozenset[str], words: set[str]) -> bool:
    return len(needed & words) >= (len(needed) - 1 if len(needed) > 2 else len(needed))


def _total_of_lead(candidates: Sequence[_Candidate]) -> list[_Candidate]:
    """`candidates` with the lead's own file's total first when it names all the lead does ("how
    much is the electricity bill": the amount due, not the line for the electricity used), and
    without that file's other lines, which the total adds up."""
    lead = candidates[0]
    if is_total(lead.pick.sentence):
        return list(candidates)
    for candidate in candidates[1:]:
        pick = candidate.pick
        if (
            candidate.item == lead.item
            and is_total(pick.sentence)
            and pick.matched >= lead.pick.matched
            and pick.score >= RELATIVE_CUTOFF * lead.pick.score
        ):
            return [candidate, *(other for other in candidates if other.item != lead.item)]
    return list(candidates)


def _total_first(candidates: Sequence[_Candidate]) -> list[_Candidate]:
    """`candidates` with each file's total ("Total due: 2,300.00 EUR") first among those scoring
    alike, so a line item of the same invoice is not what the invoice is compared by."""
    best: dict[str, float] = {}
    for candidate in candidates:
        best.setdefault(candidate.item, candidate.pick.score)
    return sorted(
        candidates,
        key=lambda candidate: (
            not (is_total(candidate.pick.sentence) and candidate.pick.score >= TIE * best[candidate.item])
        ),
    )


def _one_per_item(candidates: Sequence[_Candidate], *, floor: float) -> list[Pick]:
    """The best sentence of each compared item (file) that scores at least `floor`."""
    best: dict[str, Pick] = {}
    for candidate in candidates:
        if candidate.pick.score >= floor and candidate.item not in best:
            best[candidate.item] = candidate.pick
    return list(best.values())[:MAX_COMPARED]


def _units(passages: Sequence[Passage]) -> list[_Unit]:
    units: list[_Unit] = []
    seen: set[tuple[str, str]] = set()
    for order, passage in enumerate(passages):
        for position, sentence in enumerate(content_sentences(passage)):
            # The same sentence in two passages of a file (overlapping chunks) is one; in two files
            # ("Billing period: 1 January ..." on two bills) it is each one's.
            key = (passage.item or str(passage.n), sentence.text.lower())
            if key in seen:
                continue
            seen.add(key)
            own = frozenset(terms(sentence.text)) | sentence.about
            units.append(
                _Unit(
                    passage,
                    passage.item or str(passage.n),
                    order,
                    position,
                    sentence.text,
                    own,
                    sentence.inherited - own,
                )
            )
    return units


def _weight(wanted: frozenset[str], unit: _Unit, idf: dict[str, float]) -> float:
    return sum(idf[term] for term in wanted & unit.own) + INHERITED_WEIGHT * sum(
        idf[term] for term in wanted & unit.inherited
    )


def _idf(units: Sequence[_Unit], question_terms: frozenset[str]) -> dict[str, float]:
    # BM25's smoothed IDF over sentences: always positive, so a term every sentence shares still
    # counts a little; over sentences rather than passages, so a table's column names weigh little.
    total = len(units)
    frequency = {term: sum(term in unit.own or term in unit.inherited for unit in units) for term in question_terms}
    seen = {term: math.log(1 + (total - count + 0.5) / (count + 0.5)) for term, count in frequency.items() if count}
    # A term no sentence holds weighs as much as the rarest one found: what the part asks about may
    # be just that word ("the wifi password"), but a handful of sentences says little about rarity.
    rarest = max(seen.values(), default=0.0)
    return {term: seen.get(term, rarest) for term in question_terms}


def cite(pick: Pick) -> str:
    """The sentence with its `[n]` placed before the closing punctuation."""
    body = pick.sentence.rstrip(".!?…")
    end = pick.sentence[len(body) :]
    # One closing mark is the sentence's; a run of them ("……", "....") is a table's leader dots.
    return f"{body.rstrip()} [{pick.n}]{end if len(end) == 1 else '.'}"


def not_found(part: Part) -> str:
    # The offline answerer's sentence (apps/chat/offline.py), in the asker's language.
    return gettext("I found nothing in this folder about %(words)s.") % {
        "words": gettext('"%(word)s"') % {"word": part.text}
    }
