"""Reads for organizing: suggestions, moves and settings of one owner, and what a decision needs."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import F, Q, QuerySet

from apps.library.access import FolderAction, folder_ids_allowed
from apps.library.models import File
from apps.library.selectors import file_with_folder_get
from apps.organize.guideline import GuidelineRule, guideline_parse, guideline_read
from apps.organize.learning import LearnedTarget, SimilarDecision, learned_targets, similar_decisions
from apps.organize.models import FileMove, OrganizationSettings, OrganizationSuggestion, SuggestionStatus
from apps.organize.policy import FileFacts, Proposal, organize_propose
from apps.organize.tree import FolderSimilarity, TreeFolder, folder_similarities, folder_tree, target_folders

_FILE_TEXT_CHARS = 2000


def suggestion_list(
    *, user: AbstractBaseUser | AnonymousUser, statuses: Collection[str] = (), folder_id: int | None = None
) -> QuerySet[OrganizationSuggestion]:
    """Newest first; of any of `statuses` (none given: every status)."""
    # The folder's owner and its editors see its suggestions (and its moves, below).
    editable = folder_ids_allowed(user=user, action=FolderAction.EDIT)
    suggestions = OrganizationSuggestion.objects.filter(folder_id__in=editable).select_related(
        "file", "message", "folder"
    )
    if statuses:
        # A pending one whose file moved since by another path (a sync saw it elsewhere) has
        # nothing left to decide.
        others = [status for status in statuses if status != SuggestionStatus.PENDING]
        wanted = Q(status__in=others)
        if SuggestionStatus.PENDING in statuses:
            wanted |= Q(status=SuggestionStatus.PENDING, file__path=F("source_path"))
        suggestions = suggestions.filter(wanted)
    if folder_id is not None:
        suggestions = suggestions.filter(folder_id=folder_id)
    return suggestions.defer("file__embedding", "file__search_vector").order_by("-created_at", "-id")


@dataclass(frozen=True)
class MoveTarget:
    path: str  # "taxes/2024/"
    name: str  # "2024"
    depth: int  # 1 for a top-level folder
    files: int


def move_targets(*, folder_id: int, query: str = "", depth: int = 32) -> list[MoveTarget]:
    """Folders a file may be moved to (the tree without the inbox), in tree order; `query` keeps
    those whose path contains it, and their ancestors, so each match shows where it sits."""
    tree = folder_tree(folder_id=folder_id, depth=depth)
    paths = target_folders(tree)
    counts = {node.path: node.files for node in tree}
    needle = query.strip().lower()
    if needle:
        matches = [path for path in paths if needle in path.lower()]
        paths = [path for path in paths if any(match.startswith(path) for match in matches)]
    return [
        MoveTarget(path=path, name=path.rstrip("/").rsplit("/", 1)[-1], depth=path.count("/"), files=counts[path])
        for path in paths
    ]


def suggestion_get(*, user: AbstractBaseUser | AnonymousUser, suggestion_id: int) -> OrganizationSuggestion | None:
    return suggestion_list(user=user).filter(pk=suggestion_id).first()


def move_list(*, user: AbstractBaseUser | AnonymousUser, folder_id: int | None = None) -> QuerySet[FileMove]:
    editable = folder_ids_allowed(user=user, action=FolderAction.EDIT)
    moves = FileMove.objects.filter(file__folder_id__in=editable).select_related("file")
    if folder_id is not None:
        moves = moves.filter(file__folder_id=folder_id)
    return moves.defer("file__embedding", "file__search_vector").order_by("-created_at", "-id")


def move_get(*, user: AbstractBaseUser | AnonymousUser, move_id: int) -> FileMove | None:
    return move_list(user=user).filter(pk=move_id).first()


def organization_settings_get(*, owner_id: int) -> OrganizationSettings:
    """The owner's settings; the defaults (unsaved) for an owner who never changed them."""
    return OrganizationSettings.objects.filter(owner_id=owner_id).first() or OrganizationSettings(owner_id=owner_id)


def pending_suggestion_for_file(*, file_id: int) -> OrganizationSuggestion | None:
    return OrganizationSuggestion.objects.filter(file_id=file_id, status=SuggestionStatus.PENDING).first()


@dataclass(frozen=True)
class OrganizeInputs:
    """Everything a filing decision about one file reads, gathered once."""

    file: File
    facts: FileFacts
    guideline_text: str
    rules: tuple[GuidelineRule, ...]
    tree: list[TreeFolder]
    similarities: dict[str, FolderSimilarity]
    decisions: list[SimilarDecision]
    learned: dict[str, LearnedTarget]
    rejected_here: frozenset[str]
    settings: OrganizationSettings

    def propose(self, *, ignore_rejections: bool = False) -> Proposal:
        """`ignore_rejections` (force): folders declined for this file or files like it count again."""
        learned = self.learned
        if ignore_rejections:
            learned = {folder: dataclasses.replace(entry, blocked=False) for folder, entry in learned.items()}
        return organize_propose(
            file=self.facts,
            rules=self.rules,
            folders=target_folders(self.tree),
            similarities=self.similarities,
            learned=learned,
            rejected_here=() if ignore_rejections else self.rejected_here,
            include=self.settings.include_folders,
            exclude=self.settings.exclude_folders,
        )


def organize_inputs(*, file: File, preferences: OrganizationSettings | None = None) -> OrganizeInputs:
    """`preferences`: the owner's settings when the caller has already read them."""
    folder = file.folder
    tree = folder_tree(folder_id=folder.pk)
    text = guideline_read(folder=folder)
    decisions = similar_decisions(owner_id=folder.owner_id, folder_id=folder.pk, embedding=file.embedding)
    rejected = OrganizationSuggestion.objects.filter(file_id=file.pk, status=SuggestionStatus.REJECTED).values_list(
        "target_folder", flat=True
    )
    return OrganizeInputs(
        file=file,
        facts=FileFacts(path=file.path, name=file.name, text=f"{file.digest}\n{file.preview}"[:_FILE_TEXT_CHARS]),
        guideline_text=text,
        rules=guideline_parse(text, known_folders=[node.path for node in tree]),
        tree=tree,
        similarities=folder_similarities(folder_id=folder.pk, file_id=file.pk),
        decisions=decisions,
        learned=learned_targets(decisions),
        rejected_here=frozenset(rejected),
        settings=organization_settings_get(owner_id=folder.owner_id) if preferences is None else preferences,
    )


def file_for_organize(*, file_id: int) -> File | None:
    return file_with_folder_get(file_id=file_id)
