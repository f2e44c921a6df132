from typing import Any

from django.apps import AppConfig


def _folder_lexeme_stats_refresh(sender: object, *, folder_id: int, **kwargs: Any) -> None:
    from apps.core.metrics import indexing_stage_timed
    from apps.search.services import folder_lexeme_stats_refresh

    with indexing_stage_timed("statistics"):
        folder_lexeme_stats_refresh(folder_id=folder_id)


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"

    def ready(self) -> None:
        # Library announces chunk changes without importing search (search sits above it).
        from apps.library.signals import folder_chunks_changed

        folder_chunks_changed.connect(_folder_lexeme_stats_refresh, dispatch_uid="search.lexeme_stats")
