"""REST endpoints of the Google Drive OAuth web flow. Views validate, call a service, serialize."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.connectors.drive.oauth import drive_connect_finish, drive_connect_start
from apps.connectors.models import DriveCredential
from apps.connectors.services import drive_disconnect
from apps.core.openapi import error_response


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


class DriveCallbackApi(APIView):
    class DriveCallbackInputSerializer(serializers.Serializer):
        state = serializers.CharField(max_length=128)
        code = serializers.CharField(required=False, max_length=2048, default="")
        error = serializers.CharField(required=False, max_length=256, default="")

    class DriveCallbackOutputSerializer(serializers.ModelSerializer[DriveCredential]):
        connected = serializers.SerializerMethodField()

        class Meta:
            model = DriveCredential
            fields = ["connected", "scopes", "token_expiry"]

        def get_connected(self, credential: DriveCredential) -> bool:
            return credential.revoked_at is None

    @extend_schema(parameters=[DriveCallbackInputSerializer], responses={200: DriveCallbackOutputSerializer})
    def get(self, request: Request) -> Response:
        data = self.DriveCallbackInputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        credential = drive_connect_finish(user=request.user, **data.validated_data)  # type: ignore[arg-type]
        return Response(self.DriveCallbackOutputSerializer(credential).data)


class DriveDisconnectApi(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        drive_disconnect(user=request.user)  # type: ignore[arg-type]
        return Response(status=status.HTTP_204_NO_CONTENT)
