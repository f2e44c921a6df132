"""Output shapes of the organize endpoints (inputs live on their views)."""

from __future__ import annotations

from rest_framework import serializers

from apps.chat.serializers import InboxMessageOutputSerializer
from apps.organize.models import FileMove, OrganizationSettings, OrganizationSuggestion


class SuggestionOutputSerializer(serializers.ModelSerializer[OrganizationSuggestion]):
    file_path = serializers.CharField(source="file.path", read_only=True)
    file_name = serializers.CharField(source="file.name", read_only=True)
    message_id = serializers.IntegerField(read_only=True, allow_null=True)
    folder_name = serializers.CharField(source="folder.name", read_only=True)
    conversation_id = serializers.IntegerField(source="message.conversation_id", read_only=True, allow_null=True)

    class Meta:
        model = OrganizationSuggestion
        fields = [
            "id",
            "folder_id",
            "folder_name",
            "file_id",
            "file_path",
            "file_name",
            "source_path",
            "target_folder",
            "reasoning",
            "confidence",
            "alternatives",
            "status",
            "message_id",
            "conversation_id",
            "created_at",
            "decided_at",
            "expires_at",
        ]


class MoveOutputSerializer(serializers.ModelSerializer[FileMove]):
    class Meta:
        model = FileMove
        fields = ["id", "file_id", "suggestion_id", "from_path", "to_path", "automatic", "created_at", "undone_at"]


class RespondOutputSerializer(serializers.Serializer):
    suggestion = SuggestionOutputSerializer()
    move = MoveOutputSerializer(allow_null=True)
    message = InboxMessageOutputSerializer(allow_null=True)


class SkippedOutputSerializer(serializers.Serializer):
    path = serializers.CharField()
    reason = serializers.CharField()


class OrganizeOutputSerializer(serializers.Serializer):
    suggestions = SuggestionOutputSerializer(many=True)
    skipped = SkippedOutputSerializer(many=True)


class SettingsOutputSerializer(serializers.ModelSerializer[OrganizationSettings]):
    # null until the user first saves settings: the defaults are an unsaved row.
    updated_at = serializers.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = OrganizationSettings
        fields = [
            "auto_suggest",
            "suggest_threshold",
            "auto_move",
            "auto_move_threshold",
            "include_folders",
            "exclude_folders",
            "updated_at",
        ]


class DeclinedOutputSerializer(serializers.Serializer):
    suggestion_id = serializers.IntegerField()
    path = serializers.CharField()
    reason = serializers.CharField()


class AcceptAllOutputSerializer(serializers.Serializer):
    moves = MoveOutputSerializer(many=True)
    failed = DeclinedOutputSerializer(many=True)


class TreeFolderOutputSerializer(serializers.Serializer):
    path = serializers.CharField()
    name = serializers.CharField()
    depth = serializers.IntegerField()
    files = serializers.IntegerField()


class FolderTreeOutputSerializer(serializers.Serializer):
    folder_id = serializers.IntegerField()
    folders = TreeFolderOutputSerializer(many=True)
