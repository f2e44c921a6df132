"""Who calls a tool, and what the tools return: pydantic models, so each tool publishes an output
schema and its result arrives as structured content (and as the same JSON in text)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from pydantic import BaseModel, Field

from apps.core.models import PersonalToken


@dataclass(frozen=True)
class Caller:
    """The user a tool acts for, where the site is, for links, and the language to write to them in.

    Over HTTP the user carries the personal token that authenticated them (`apps.core.tokens.token_of`),
    so the library's access selectors honour its folder limit; over stdio there is no token and every
    scope is the user's own.
    """

    user: AbstractBaseUser
    token: PersonalToken | None
    site_url: str
    # `apps.core.preferences.answer_language`: the user's choice, else the client's Accept-Language.
    language: str

    def document_url(self, *, file_id: int, chunk_id: int | None = None) -> str:
        """The document page (`apps.web`), opened at the chunk when one is given."""
        return f"{self.site_url}/files/{file_id}" + (f"?chunk={chunk_id}" if chunk_id else "")


class FolderItem(BaseModel):
    id: int
    name: str
    role: str = Field(description="owner, editor or viewer")
    status: str
    files_indexed: int


class FolderList(BaseModel):
    folders: list[FolderItem]


class Passage(BaseModel):
    chunk_id: int
    file_id: int
    file_name: str
    path: str
    location: dict[str, Any] = Field(description="Where in the file: page, heading, sheet and cells, slide...")
    location_label: str = Field(description="The location in words: page 3, cells A1:C9.")
    text: str
    score: float
    url: str = Field(description="The document page, opened at this passage.")


class SearchResult(BaseModel):
    passages: list[Passage]
    words_matched: bool | None = Field(
        description="Whether any passage holds the query's words (null in vector mode): false means the "
        "passages are only the closest in meaning."
    )
    message: str = ""


class Source(BaseModel):
    n: int = Field(description="The [n] that cites it in the answer.")
    file_id: int
    file_name: str
    path: str
    location: str
    chunk_id: int | None
    snippet: str
    url: str


class Answer(BaseModel):
    answer: str = Field(description="The answer, citing its sources as [n].")
    sources: list[Source]
    notice: str = Field("", description="Why the answer came from the offline answerer, when it did.")
    options: list[str] = Field(default_factory=list, description="A clarifying question's choices.")
    conversation_id: int
    conversation_url: str
    run_id: str


class DocumentChunk(BaseModel):
    chunk_id: int
    chunk_index: int
    location: dict[str, Any]
    location_label: str
    text: str


class Document(BaseModel):
    file_id: int
    folder_id: int
    file_name: str
    path: str
    mime_type: str
    url: str
    chunk_count: int
    chunks: list[DocumentChunk] = Field(description="Chunks in document order, from the one asked for.")
    next_chunk: int | None = Field(description="The chunk id to read on from, when more follow.")
