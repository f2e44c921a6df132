"""The API's view of a stored text (apps/core/stored_messages.py): rendered in the request's language."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.core.stored_messages import I18N_SUFFIX, stored_message_render


class StoredMessageField(serializers.CharField):
    """A model's stored text (``source`` names it) rendered in the request's language."""

    def __init__(self, *, source: str, **kwargs: Any) -> None:
        self.text_attribute = source
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, value: Any) -> str:
        text = getattr(value, self.text_attribute)
        return stored_message_render(text, getattr(value, self.text_attribute + I18N_SUFFIX, None))
