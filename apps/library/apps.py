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
