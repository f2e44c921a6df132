from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import ApplicationError
from apps.core.openapi import error_response


class TokenObtainApi(APIView):
    """Exchange a username and password for an API token (header `Authorization: Token ...`)."""

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    class TokenObtainInputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=256, trim_whitespace=False)

    class TokenOutputSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(
        request=TokenObtainInputSerializer,
        responses={200: TokenOutputSerializer, 401: error_response("Invalid username or password.")},
    )
    def post(self, request: Request) -> Response:
        data = self.TokenObtainInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(request, username=data.validated_data["username"], password=data.validated_data["password"])
        if user is None or not user.is_active:
            raise AuthenticationFailed("Invalid username or password.")
        token, _ = Token.objects.get_or_create(user=user)
        return Response(self.TokenOutputSerializer({"token": token.key}).data, status=status.HTTP_200_OK)


class TokenRevokeApi(APIView):
    """Revoke the caller's API token; later requests with it get 401."""

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        Token.objects.filter(user=request.user).delete()  # type: ignore[misc]  # IsAuthenticated holds
        return Response(status=status.HTTP_204_NO_CONTENT)


class AuthenticationFailed(ApplicationError):
    status_code = status.HTTP_401_UNAUTHORIZED
