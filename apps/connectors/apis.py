"""REST endpoints of the Google Drive OAuth web flow. Views validate, call a service, serialize."""

from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.connectors.drive.connection import owner_drive_browser
from apps.connectors.drive.factory import drive_access
from apps.connectors.drive.oauth import drive_connect_start
from apps.connectors.selectors import drive_credential_get
from apps.connectors.services import drive_disconnect
from apps.core.api import ApplicationError, ConflictError
from apps.core.openapi import error_response
from apps.core.stored_messages import message_shown
from apps.library.sources import SourceAuthError, SourceError, SourceNotFoundError


# Named after their view: the schema names components by class name, and "Output" is taken.
class DriveConnectApi(APIView):
    class DriveConnectOutputSerializer(serializers.Serializer):
        auth_url = serializers.URLField(help_text="Send the user's browser here to grant Drive access.")

    @extend_schema(
        responses={200: DriveConnectOutputSerializer, 400: error_response("Google OAuth is not configured.")}
    )
    def get(self, request: Request) -> Response:
        auth_url = drive_connect_start(user=request.user)  # type: ignore[arg-type]
        return Response(self.DriveConnectOutputSerializer({"auth_url": auth_url}).data)


class DriveDisconnectApi(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        drive_disconnect(user=request.user)  # type: ignore[arg-type]
        return Response(status=status.HTTP_204_NO_CONTENT)


class DriveStatusApi(APIView):
    class DriveStatusOutputSerializer(serializers.Serializer):
        connected = serializers.BooleanField(help_text="Drive can be browsed and synced for this user now.")
        access = serializers.ChoiceField(
            choices=["oauth", "service_account", "emulator", ""],
            allow_blank=True,
            help_text="How: the user's consent, the server's service account (no consent), a local emulator.",
        )
        can_connect = serializers.BooleanField(help_text="The OAuth web flow is configured (Connect Google Drive).")

    @extend_schema(responses={200: DriveStatusOutputSerializer})
    def get(self, request: Request) -> Response:
        credential = drive_credential_get(owner_id=request.user.pk)  # type: ignore[arg-type]
        access = "oauth" if credential is not None else drive_access()
        body = {
            "connected": bool(access),
            "access": access,
            "can_connect": bool(settings.GOOGLE_OAUTH_CLIENT_ID and settings.GOOGLE_OAUTH_CLIENT_SECRET),
        }
        return Response(self.DriveStatusOutputSerializer(body).data)


class DriveFolderOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    drive_id = serializers.CharField(allow_null=True, help_text="The shared drive it is in; null in My Drive.")


class DriveFoldersApi(APIView):
    """Browse the user's Drive for a folder to connect: folders only, read-only, a page at a time."""

    class DriveFoldersInputSerializer(serializers.Serializer):
        # The stubs type Field.parent as the parent serializer; here it is just a field named "parent".
        parent = serializers.CharField(  # type: ignore[assignment]
            required=False, allow_blank=True, max_length=256, help_text="Folder id; omitted: My Drive's root."
        )
        drive = serializers.CharField(
            required=False, allow_blank=True, max_length=256, help_text="Shared drive id (browse inside it)."
        )
        q = serializers.CharField(
            required=False, allow_blank=True, max_length=200, help_text="Folders whose name contains this."
        )
        page_token = serializers.CharField(required=False, allow_blank=True, max_length=512)

    class DriveFolderPageOutputSerializer(serializers.Serializer):
        folders = DriveFolderOutputSerializer(many=True)
        breadcrumbs = DriveFolderOutputSerializer(many=True, help_text="From the drive's root to the parent.")
        drives = DriveFolderOutputSerializer(many=True, help_text="Shared drives (My Drive's first page only).")
        next_page_token = serializers.CharField(allow_null=True)

    @extend_schema(
        parameters=[DriveFoldersInputSerializer],
        responses={
            200: DriveFolderPageOutputSerializer,
            404: error_response("The folder does not exist or the user's Drive access cannot read it."),
            409: error_response("Google Drive is not connected, or access was revoked: reconnect."),
        },
    )
    def get(self, request: Request) -> Response:
        data = self.DriveFoldersInputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            page = owner_drive_browser(owner_id=request.user.pk).folders(  # type: ignore[arg-type]
                parent=values.get("parent", ""),
                drive=values.get("drive") or None,
                name=values.get("q", "").strip(),
                page_token=values.get("page_token") or None,
            )
        except SourceNotFoundError:
            raise NotFound(_("This Drive folder does not exist or your Google account cannot read it.")) from None
        except SourceAuthError as exc:
            raise ConflictError(message_shown(exc)) from None
        except SourceError as exc:
            raise ApplicationError(message_shown(exc)) from None
        return Response(self.DriveFolderPageOutputSerializer(page).data)
