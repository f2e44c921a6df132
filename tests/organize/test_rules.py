"""Paths, guideline parsing, the offline policy and what decisions teach: pure functions, no database."""

from __future__ import annotations

import pytest

from apps.core.api import ApplicationError
from apps.organize.guideline import guideline_parse
from apps.organize.learning import SimilarDecision, guideline_proposal, learned_targets
from apps.organize.paths import file_path_clean, folder_path_clean
from apps.organize.policy import FileFacts, organize_propose
from apps.organize.tree import FolderSimilarity
from tests.support.sample_folder import SAMPLE

GUIDELINE = (SAMPLE / "guideline.md").read_text()
FOLDERS = ["finance/", "personal/", "taxes/", "work/"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("taxes", "taxes/"),
        ("taxes/2024/", "taxes/2024/"),
        (" work/reports ", "work/reports/"),
        ("life/gov docs", "life/gov docs/"),
    ],
)
def test_folder_paths_are_put_in_one_form(value, expected):
    assert folder_path_clean(value) == expected


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("../outside", "'..'"),
        ("taxes/../../etc", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows", "absolute"),
        ("taxes\x00/", "NUL"),
        ("taxes\\2024", "forward slashes"),
        ("a//b", "empty"),
        ("", "must name a folder"),
        ("/", "must name a folder"),
        ("./taxes", "'.'"),
        ("x" * 300, "longer than"),
    ],
)
def test_unsafe_folder_paths_are_refused_with_the_reason(value, problem):
    with pytest.raises(ApplicationError) as raised:
        folder_path_clean(value)
    assert problem in raised.value.message
    assert raised.value.status_code == 400


def test_file_paths_must_name_a_file():
    assert file_path_clean("inbox/W2_2024.pdf") == "inbox/W2_2024.pdf"
    with pytest.raises(ApplicationError):
        file_path_clean("inbox/")
    with pytest.raises(ApplicationError):
        file_path_clean("inbox/../../secret")


def test_the_sample_guideline_becomes_sections_and_one_line_rules_with_their_lines():
    rules = guideline_parse(GUIDELINE, known_folders=FOLDERS)

    sections = {rule.target: rule for rule in rules if not rule.specific}
    lines = [(rule.line, rule.target) for rule in rules if rule.specific]
    assert set(sections) == {"finance/", "taxes/", "work/", "personal/"}
    assert {"w2", "1099", "checklist"} <= sections["taxes/"].terms
    # Line 25 wraps onto line 26: one rule, whole.
    assert lines == [(24, "taxes/"), (25, "finance/"), (27, "personal/")]
    assert next(rule for rule in rules if rule.line == 25).text.endswith("checklist of its year.")
    # "When unsure, leave the file in `inbox/`" is advice, not a destination.
    assert all(rule.target != "inbox/" for rule in rules)


def test_bare_folder_references_and_year_templates_are_rules():
    rules = guideline_parse("Tax forms (W-2, 1099) go in taxes/{year}/\n- Photos of IDs: put them in `life/gov docs/`")

    assert [(rule.target, rule.specific) for rule in rules] == [("taxes/{year}/", True), ("life/gov docs/", True)]
    assert {"w2", "1099", "tax", "form"} <= rules[0].terms


def propose(name: str, text: str, **options):
    return organize_propose(
        file=FileFacts(path=f"inbox/{name}", name=name, text=text),
        rules=options.pop("rules", guideline_parse(GUIDELINE, known_folders=FOLDERS)),
        folders=options.pop("folders", FOLDERS),
        similarities=options.pop("similarities", {}),
        learned=options.pop("learned", {}),
        **options,
    )


def test_a_w2_goes_to_taxes_with_the_guideline_line_quoted():
    proposal = propose("W2_2024.pdf", "Form W-2 Wage and Tax Statement 2024. Employer: Contoso Ltd.")

    assert proposal.best is not None
    assert proposal.best.folder == "taxes/"
    assert proposal.best.confidence >= 0.8
    assert 'guideline.md line 24: "A W-2 or 1099 always goes to `taxes/`' in proposal.best.reasoning
    assert "W2" in proposal.best.reasoning
    assert proposal.alternatives and all(alt.confidence < proposal.best.confidence for alt in proposal.alternatives)


@pytest.mark.parametrize(
    ("name", "text", "folder"),
    [
        ("lease-renewal-2025.docx", "Lease renewal 2025 between Harbor View Properties and Alex Morgan.", "personal/"),
        ("invoice-INV-20931.txt", "INVOICE INV-20931 for design work, amount due 1,200 EUR.", "finance/"),
        ("1099-INT_2024.txt", "Form 1099-INT Interest Income 2024 for your tax return.", "taxes/"),
    ],
)
def test_sample_inbox_files_go_where_the_guideline_says(name, text, folder):
    proposal = propose(name, text)

    assert proposal.best is not None and proposal.best.folder == folder
    assert proposal.best.confidence >= 0.8


def test_year_templates_take_the_files_year_or_fall_back_to_the_parent():
    rules = guideline_parse("Tax forms (W-2, 1099) go in taxes/{year}/")

    dated = propose("W2_2024.pdf", "Form W-2 wages", rules=rules, folders=[])
    undated = propose("W2.pdf", "Form W-2 wages", rules=rules, folders=[])

    assert dated.best is not None and dated.best.folder == "taxes/2024/"
    assert undated.best is not None and undated.best.folder == "taxes/"


def test_resemblance_alone_suggests_with_modest_confidence():
    similarities = {"work/": FolderSimilarity(similarity=0.75, files=4), "personal/": FolderSimilarity(0.1, 3)}

    proposal = propose("notes.txt", "Standup notes", rules=(), similarities=similarities)

    assert proposal.best is not None and proposal.best.folder == "work/"
    assert 0.3 < proposal.best.confidence < 0.8
    assert "resembles the 4 files already in work/" in proposal.best.reasoning


def test_nothing_fits_means_no_proposal():
    assert propose("scan.bin", "", rules=(), folders=FOLDERS).best is None


def test_declined_excluded_and_not_included_folders_are_never_offered():
    text = "Form W-2 Wage and Tax Statement. Employer: Contoso Ltd."

    declined = propose("W2_2024.pdf", text, rejected_here=["taxes/"])
    excluded = propose("W2_2024.pdf", text, exclude=["taxes/"])
    only_work = propose("W2_2024.pdf", text, include=["work/"])

    for proposal in (declined, excluded):
        assert proposal.best is not None and proposal.best.folder != "taxes/"
        assert "taxes/" in proposal.not_offered
    assert "declined" in declined.not_offered["taxes/"]
    assert only_work.best is not None and only_work.best.folder == "work/"
    assert only_work.not_offered["taxes/"] == "not among the user's included folders"


def decision(id: int, action: str, suggested: str, final: str, similarity: float, name: str = "W2.pdf"):
    return SimilarDecision(
        id=id, action=action, suggested_target=suggested, final_target=final, file_name=name, similarity=similarity
    )


def test_acceptances_raise_and_rejections_lower_a_folders_confidence():
    text = "Payslip for March from Contoso"
    accepted = learned_targets(
        [decision(1, "accept", "work/", "work/", 0.8), decision(2, "accept", "work/", "work/", 0.78)]
    )
    rejected = learned_targets([decision(1, "reject", "work/", "", 0.8)])
    similarities = {"work/": FolderSimilarity(similarity=0.5, files=3)}

    base = propose("payslip.pdf", text, rules=(), similarities=similarities)
    up = propose("payslip.pdf", text, rules=(), similarities=similarities, learned=accepted)
    down = propose("payslip.pdf", text, rules=(), similarities=similarities, learned=rejected)

    assert base.best is not None and up.best is not None
    assert up.best.confidence > base.best.confidence
    assert "You put 2 similar files here before." in up.best.reasoning
    assert down.best is None or down.best.confidence < base.best.confidence


def test_a_folder_declined_for_a_near_identical_file_stops_being_offered_until_accepted_again():
    blocked = learned_targets([decision(1, "reject", "taxes/", "", 0.97)])
    reopened = learned_targets(
        [decision(1, "reject", "taxes/", "", 0.97), decision(2, "accept", "taxes/", "taxes/", 0.95)]
    )
    loosely = learned_targets([decision(1, "reject", "taxes/", "", 0.8)])

    assert blocked["taxes/"].blocked
    assert not reopened["taxes/"].blocked
    assert not loosely["taxes/"].blocked
    proposal = propose("W2_2024.pdf", "Form W-2 Wage and Tax Statement", learned=blocked)
    assert proposal.best is not None and proposal.best.folder != "taxes/"
    assert proposal.not_offered["taxes/"] == "the user declined it for a file just like this one"


def test_choosing_another_folder_teaches_the_chosen_one_and_discounts_the_suggested():
    learned = learned_targets([decision(1, "choose", "finance/", "finance/receipts/", 0.9)])

    assert learned["finance/receipts/"].net == pytest.approx(0.9)
    assert learned["finance/"].net == pytest.approx(-0.45)
    assert not learned["finance/"].blocked


def test_three_consistent_acceptances_propose_a_guideline_line():
    names = ["W2_2022.pdf", "W2_2023.pdf", "W2_2024.pdf"]
    two = [decision(n, "accept", "taxes/", "taxes/", 0.9, name) for n, name in enumerate(names[:2], start=1)]
    three = [decision(n, "accept", "taxes/", "taxes/", 0.9, name) for n, name in enumerate(names, start=1)]
    mixed = [*three, decision(9, "reject", "taxes/", "", 0.85, "W2_2021.pdf")]

    assert guideline_proposal(decisions=two, target="taxes/") is None
    assert guideline_proposal(decisions=mixed, target="taxes/") is None
    proposal = guideline_proposal(decisions=three, target="taxes/")
    assert proposal is not None
    assert proposal.line == "- Files named like W2 (e.g. W2_2022.pdf, W2_2023.pdf, W2_2024.pdf) go in `taxes/`."
    # The proposed line is one the guideline parser understands.
    (rule,) = guideline_parse(proposal.line)
    assert rule.target == "taxes/" and "w2" in rule.terms
