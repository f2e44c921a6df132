import os

from django.core.asgi import get_asgi_application

from apps.core.tracing import tracing_configure

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Before the handler is built: the Django instrumentation adds its middleware to the settings.
tracing_configure(service_name="folder-chat-web")
django_application = get_asgi_application()

from apps.core.body_cap import RequestBodyCap  # noqa: E402  (needs the settings configured above)

application = RequestBodyCap(django_application)
