from django.apps import AppConfig


class LibraryConfig(AppConfig):
    name = "apps.library"
    label = "library"

    def ready(self) -> None:
        # Core checks a new token's folder limit against the maker's folders, which it cannot import.
        from apps.core.tokens import FOLDER_IDS_VISIBLE
        from apps.library.access import folder_ids_visible

        if folder_ids_visible not in FOLDER_IDS_VISIBLE:
            FOLDER_IDS_VISIBLE.append(folder_ids_visible)
        # A remote embedder's tokens are recorded for the owner of the folder being embedded.
        from apps.embeddings.providers import EMBEDDING_USAGE_OBSERVERS
        from apps.library.pipeline import embedding_usage_observe

        if embedding_usage_observe not in EMBEDDING_USAGE_OBSERVERS:
            EMBEDDING_USAGE_OBSERVERS.append(embedding_usage_observe)
