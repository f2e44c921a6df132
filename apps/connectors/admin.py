from django.contrib import admin

from apps.connectors.models import DriveCredential


@admin.register(DriveCredential)
class DriveCredentialAdmin(admin.ModelAdmin[DriveCredential]):
    # Tokens are never shown, not even encrypted.
    list_display = ["owner", "token_expiry", "revoked_at", "updated_at"]
    search_fields = ["owner__username"]
    exclude = ["access_token", "refresh_token"]
    readonly_fields = ["owner", "token_expiry", "scopes", "revoked_at"]
