"""`GET /api/usage`: the caller's model usage (tokens and cost) over UTC days, grouped."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth import get_user_model
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.openapi import error_response
from apps.llm.usage_selectors import GROUPS, usage_summary

DEFAULT_DAYS = 30
MAX_DAYS = 366


class UsageTokensSerializer(serializers.Serializer):
    input = serializers.IntegerField(help_text="Every input token sent, cached ones included.")
    output = serializers.IntegerField()
    cached = serializers.IntegerField(help_text="Of input, read from the provider's prompt cache.")


class UsageTotalsSerializer(serializers.Serializer):
    tokens = UsageTokensSerializer()
    cost = serializers.DecimalField(max_digits=14, decimal_places=6, help_text="USD, from the price table.")
    calls = serializers.IntegerField(help_text="Model calls made.")


class UsageGroupSerializer(UsageTotalsSerializer):
    key = serializers.CharField(
        allow_null=True, help_text="The UTC day (ISO), the model's name, or the folder id (null: no folder)."
    )


class UsageOutputSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    totals = UsageTotalsSerializer()
    groups = UsageGroupSerializer(many=True)
    group_by = serializers.ChoiceField(choices=list(GROUPS))

    def get_fields(self) -> dict[str, serializers.Field]:
        # `from` is a Python keyword, so it cannot be a class attribute.
        return {"from": serializers.DateField(), "to": serializers.DateField(), **super().get_fields()}


class UsageApi(APIView):
    """Model calls made for the caller (answers, agent turns, the inbox router, summaries, image
    descriptions): input, output and cached tokens and their cost, between two UTC days (both
    included; by default the last 30), per day, model or folder. Staff may ask for any user's."""

    class FilterSerializer(serializers.Serializer):
        to = serializers.DateField(required=False, help_text="Last UTC day (ISO date), default today.")
        group_by = serializers.ChoiceField(choices=list(GROUPS), default="day")
        user = serializers.IntegerField(required=False, min_value=1, help_text="Staff only: another user's id.")

        def get_fields(self) -> dict[str, serializers.Field]:
            start = serializers.DateField(
                required=False, help_text=f"First UTC day, default {DEFAULT_DAYS - 1} days before `to`."
            )
            return {"from": start, **super().get_fields()}

        def validate(self, attrs: dict) -> dict:
            end = attrs.get("to") or timezone.now().astimezone(dt.UTC).date()
            start = attrs.get("from") or end - dt.timedelta(days=DEFAULT_DAYS - 1)
            if start > end:
                raise serializers.ValidationError({"from": _("`from` must not be after `to`.")})
            if (end - start).days >= MAX_DAYS:
                raise serializers.ValidationError({"from": _("At most %(days)s days at a time.") % {"days": MAX_DAYS}})
            return {**attrs, "from": start, "to": end}

    @extend_schema(
        parameters=[FilterSerializer],
        responses={
            200: UsageOutputSerializer,
            403: error_response("`user` was given by someone who is not staff."),
            404: error_response("`user` names no user."),
        },
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        values = filters.validated_data
        user_id = values.get("user")
        if user_id is None:
            user_id = request.user.pk
        elif not request.user.is_staff:
            raise exceptions.PermissionDenied(_("Only staff may see another user's usage."))
        elif not get_user_model().objects.filter(pk=user_id).exists():
            raise exceptions.NotFound(_("No such user."))
        summary = usage_summary(user_id=user_id, start=values["from"], end=values["to"], group_by=values["group_by"])
        return Response(UsageOutputSerializer(summary).data)
