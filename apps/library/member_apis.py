"""Sharing endpoints: a folder's members, its invitation links, its audit log; joining by a link."""

from __future__ import annotations

from django.http import Http404
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import paginated_response
from apps.core.models import AuditEntry
from apps.core.openapi import PAGINATION_PARAMETERS, error_response, paginated
from apps.library import members
from apps.library.access import FolderAction, folder_access
from apps.library.models import FolderInvitation, FolderMembership

ROLE_CHOICES = [role.value for role in members.MEMBER_ROLES]


class MemberOutputSerializer(serializers.ModelSerializer[FolderMembership]):
    user_id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")

    class Meta:
        model = FolderMembership
        fields = ["user_id", "username", "role", "created_at"]


class FolderMembersApi(APIView):
    class MemberAddInputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=254, help_text="A username, or the email of one account.")
        role = serializers.ChoiceField(choices=ROLE_CHOICES)

    @extend_schema(parameters=PAGINATION_PARAMETERS, responses={200: paginated(MemberOutputSerializer)})
    def get(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id)
        return paginated_response(
            queryset=members.member_list(folder=folder),
            serializer_class=MemberOutputSerializer,
            request=request,
            view=self,
        )

    @extend_schema(
        request=MemberAddInputSerializer,
        responses={201: MemberOutputSerializer, 409: error_response("Already a member, or the owner.")},
    )
    def post(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.MANAGE)
        data = self.MemberAddInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership = members.member_add(
            folder=folder,
            actor=request.user,  # type: ignore[arg-type]
            name=data.validated_data["username"],
            role=data.validated_data["role"],
        )
        return Response(MemberOutputSerializer(membership).data, status=status.HTTP_201_CREATED)


class FolderMemberDetailApi(APIView):
    class RoleInputSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=ROLE_CHOICES)

    def _membership(self, request: Request, folder_id: int, user_id: int) -> FolderMembership:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.MANAGE)
        membership = members.member_list(folder=folder).filter(user_id=user_id).first()
        if membership is None:
            raise Http404(_("Member not found."))
        return membership

    @extend_schema(request=RoleInputSerializer, responses={200: MemberOutputSerializer})
    def patch(self, request: Request, folder_id: int, user_id: int) -> Response:
        membership = self._membership(request, folder_id, user_id)
        data = self.RoleInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership = members.member_role_change(
            membership=membership,
            actor=request.user,  # type: ignore[arg-type]
            role=data.validated_data["role"],
        )
        return Response(MemberOutputSerializer(membership).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, folder_id: int, user_id: int) -> Response:
        membership = self._membership(request, folder_id, user_id)
        members.member_remove(membership=membership, actor=request.user)  # type: ignore[arg-type]
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationOutputSerializer(serializers.ModelSerializer[FolderInvitation]):
    anyone_with_link = serializers.BooleanField(read_only=True)

    class Meta:
        model = FolderInvitation
        fields = ["id", "role", "invitee", "anyone_with_link", "expires_at", "created_at"]


class FolderInvitationsApi(APIView):
    class InvitationInputSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=ROLE_CHOICES)
        invitee = serializers.CharField(
            max_length=254,
            required=False,
            allow_blank=True,
            help_text="The one person it admits: a username, or an email that person has verified.",
        )
        anyone_with_link = serializers.BooleanField(
            default=False, help_text="Admit whoever opens the link instead; exactly one of the two is required."
        )

    class InvitationCreatedOutputSerializer(InvitationOutputSerializer):
        url = serializers.CharField(help_text="The link to send: shown once, never stored.")

        class Meta(InvitationOutputSerializer.Meta):
            fields = [*InvitationOutputSerializer.Meta.fields, "url"]

    @extend_schema(parameters=PAGINATION_PARAMETERS, responses={200: paginated(InvitationOutputSerializer)})
    def get(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.MANAGE)
        return paginated_response(
            queryset=members.invitation_pending_list(folder=folder),
            serializer_class=InvitationOutputSerializer,
            request=request,
            view=self,
        )

    @extend_schema(
        request=InvitationInputSerializer,
        responses={201: InvitationCreatedOutputSerializer, 400: error_response("Neither or both of the choices.")},
    )
    def post(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.MANAGE)
        data = self.InvitationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        invitation, token = members.invitation_create(
            folder=folder,
            actor=request.user,  # type: ignore[arg-type]
            role=data.validated_data["role"],
            invitee=data.validated_data.get("invitee", ""),
            anyone_with_link=data.validated_data["anyone_with_link"],
        )
        invitation.url = request.build_absolute_uri(reverse("web-invitation", kwargs={"token": token}))  # type: ignore[attr-defined]
        return Response(self.InvitationCreatedOutputSerializer(invitation).data, status=status.HTTP_201_CREATED)


class FolderInvitationDetailApi(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request: Request, folder_id: int, invitation_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.MANAGE)
        invitation = members.invitation_pending_list(folder=folder).filter(pk=invitation_id).first()
        if invitation is None:
            raise Http404(_("Invitation not found."))
        members.invitation_revoke(invitation=invitation)
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationAcceptApi(APIView):
    class AcceptInputSerializer(serializers.Serializer):
        token = serializers.CharField(max_length=128)

    class AcceptOutputSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField()
        folder_name = serializers.CharField()

    @extend_schema(
        request=AcceptInputSerializer,
        responses={200: AcceptOutputSerializer, 403: error_response("The invitation is for another account.")},
    )
    def post(self, request: Request) -> Response:
        data = self.AcceptInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        folder = members.invitation_accept(token=data.validated_data["token"], user=request.user)  # type: ignore[arg-type]
        return Response(self.AcceptOutputSerializer({"folder_id": folder.pk, "folder_name": folder.name}).data)


class AuditEntryOutputSerializer(serializers.ModelSerializer[AuditEntry]):
    class Meta:
        model = AuditEntry
        fields = ["id", "created_at", "actor_name", "action", "target", "detail"]


class FolderAuditApi(APIView):
    @extend_schema(parameters=PAGINATION_PARAMETERS, responses={200: paginated(AuditEntryOutputSerializer)})
    def get(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.MANAGE)
        return paginated_response(
            queryset=AuditEntry.objects.filter(folder_id=folder.pk).order_by("-created_at"),
            serializer_class=AuditEntryOutputSerializer,
            request=request,
            view=self,
        )
