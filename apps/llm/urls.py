from django.urls import path

from apps.llm import usage_apis

urlpatterns = [
    path("usage", usage_apis.UsageApi.as_view(), name="usage"),
]
