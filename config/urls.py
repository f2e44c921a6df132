from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from apps.core.admin import queue_metrics_view
from apps.core.metrics_view import metrics_view
from apps.web.views import drive_callback

handler404 = "apps.core.views.not_found"
handler500 = "apps.core.views.server_error"

urlpatterns = [
    # Before the admin's own URLs, which would answer this path with a 404.
    path("admin/queues/", admin.site.admin_view(queue_metrics_view), name="admin-queues"),
    path("admin/", admin.site.urls),
    # Prometheus: staff sessions or `Authorization: Bearer <METRICS_TOKEN>` (not DRF's authentication).
    path("metrics", metrics_view, name="metrics"),
    path("api/schema", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    # Google sends the browser here after consent: a page, not an API answer (apps.web).
    path("api/drive/callback", drive_callback, name="drive-callback"),
    path("api/", include("apps.core.urls")),
    path("api/", include("apps.library.urls")),
    path("api/", include("apps.search.urls")),
    path("api/", include("apps.chat.urls")),
    path("api/", include("apps.llm.urls")),
    path("api/", include("apps.connectors.urls")),
    path("api/", include("apps.organize.urls")),
    path("api/", include("apps.evaluation.urls")),
    path("api/", include("apps.inbox.urls")),
    # Sign in with Google (allauth): /accounts/google/login/ and its callback.
    path("accounts/", include("allauth.urls")),
    path("", include("apps.web.urls")),
]
