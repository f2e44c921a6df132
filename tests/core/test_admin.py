import pytest
from django.contrib import admin
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, django_user_model):
    staff = django_user_model.objects.create_superuser("root", "root@example.com", "root-password")
    client.force_login(staff)
    return client


def test_every_model_changelist_renders_for_staff(staff_client):
    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert staff_client.get(url).status_code == 200, url


def test_admin_is_closed_to_non_staff(client, user):
    client.force_login(user)
    response = client.get("/admin/library/folder/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
