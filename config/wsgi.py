import os

from django.core.wsgi import get_wsgi_application

from apps.core.tracing import tracing_configure

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Before the handler is built: the Django instrumentation adds its middleware to the settings.
tracing_configure(service_name="folder-chat-web")
application = get_wsgi_application()
