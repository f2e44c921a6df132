from __future__ import annotations

from django.contrib.auth import authenticate
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import ApplicationError
from apps.core.models import PersonalToken, TokenScope
from apps.core.openapi import error_response
from apps.core.token_auth import ANY_SCOPE
from apps.core.tokens import PASSWORD_LOGIN_NAME, personal_token_create, personal_token_revoke


class TokenObtainApi(APIView):
    """Exchange a username and password for a new personal API token with every scope, named
    "password login" (header `Authorization: Bearer ...`; `Token ...` works too). Each call makes
    another: only its digest is kept, so an earlier one cannot be shown again."""

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
            raise AuthenticationFailed(gettext("Invalid username or password."))
        _, secret = personal_token_create(user=user, name=PASSWORD_LOGIN_NAME, scopes=TokenScope.values)
        return Response(self.TokenOutputSerializer({"token": secret}).data, status=status.HTTP_200_OK)


class TokenRevokeApi(APIView):
    """Revoke the API token this request carries; later requests with it get 401. Any scope may
    (a token can always end itself). A session has no token here: DELETE /api/tokens/{id}."""

    required_scope = ANY_SCOPE

    @extend_schema(request=None, responses={204: None, 400: error_response("No API token in the request.")})
    def post(self, request: Request) -> Response:
        if not isinstance(request.auth, PersonalToken):
            raise ApplicationError(
                gettext("This request carries no API token; revoke tokens with DELETE /api/tokens/{id}.")
            )
        personal_token_revoke(user=request.user, token_id=request.auth.pk)  # type: ignore[arg-type]
        return Response(status=status.HTTP_204_NO_CONTENT)


class AuthenticationFailed(ApplicationError):
    status_code = status.HTTP_401_UNAUTHORIZED
