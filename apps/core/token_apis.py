"""/api/tokens: the caller's personal API tokens. Session only: a token cannot make or revoke tokens."""

from __future__ import annotations

from django.http import Http404
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import paginated_response
from apps.core.models import PersonalToken, TokenScope
from apps.core.openapi import PAGINATION_PARAMETERS, error_response, paginated
from apps.core.tokens import MAX_EXPIRES_IN_DAYS, personal_token_create, personal_token_list, personal_token_revoke

SESSION_ONLY = "A request with an API token: tokens are made and revoked from a signed-in session."


class PersonalTokenOutputSerializer(serializers.ModelSerializer[PersonalToken]):
    class Meta:
        model = PersonalToken
        fields = ["id", "name", "prefix", "scopes", "folder_ids", "created_at", "expires_at", "last_used_at"]


class PersonalTokenCreatedOutputSerializer(PersonalTokenOutputSerializer):
    token = serializers.CharField(help_text="The secret, shown this once: send it as `Authorization: Bearer ...`.")

    class Meta(PersonalTokenOutputSerializer.Meta):
        fields = [*PersonalTokenOutputSerializer.Meta.fields, "token"]


class TokenCollectionApi(APIView):
    """List your API tokens (never their secrets), or make one."""

    session_only = True

    class TokenCreateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)
        scopes = serializers.ListField(
            child=serializers.ChoiceField(choices=TokenScope.choices), min_length=1, max_length=len(TokenScope)
        )
        folder_ids = serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            required=False,
            allow_null=True,
            min_length=1,
            max_length=500,
            help_text="Limit the token to these folders; left out: every folder you have a role on.",
        )
        expires_in_days = serializers.IntegerField(
            min_value=1, max_value=MAX_EXPIRES_IN_DAYS, required=False, allow_null=True, help_text="Left out: never."
        )

    @extend_schema(
        parameters=PAGINATION_PARAMETERS,
        responses={200: paginated(PersonalTokenOutputSerializer), 403: error_response(SESSION_ONLY)},
    )
    def get(self, request: Request) -> Response:
        return paginated_response(
            queryset=personal_token_list(user=request.user),  # type: ignore[arg-type]  # IsAuthenticated holds
            serializer_class=PersonalTokenOutputSerializer,
            request=request,
            view=self,
        )

    @extend_schema(
        request=TokenCreateInputSerializer,
        responses={201: PersonalTokenCreatedOutputSerializer, 403: error_response(SESSION_ONLY)},
    )
    def post(self, request: Request) -> Response:
        data = self.TokenCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        token, secret = personal_token_create(user=request.user, **data.validated_data)  # type: ignore[arg-type]
        token.token = secret  # type: ignore[attr-defined]  # shown once, never stored
        return Response(PersonalTokenCreatedOutputSerializer(token).data, status=status.HTTP_201_CREATED)


class TokenDetailApi(APIView):
    """Revoke one of your API tokens: later requests with it get 401."""

    session_only = True

    @extend_schema(request=None, responses={204: None, 403: error_response(SESSION_ONLY)})
    def delete(self, request: Request, token_id: int) -> Response:
        if not personal_token_revoke(user=request.user, token_id=token_id):  # type: ignore[arg-type]
            raise Http404(_("Token not found."))
        return Response(status=status.HTTP_204_NO_CONTENT)
