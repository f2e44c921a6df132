import os

from django.core.asgi import get_asgi_application

from apps.core.tracing import tracing_configure

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Before the handler is built: the Django instrumentation adds its middleware to the settings.
tracing_configure(service_name="folder-chat-web")
django_application = get_asgi_application()

from apps.core.body_cap import RequestBodyCap  # noqa: E402  (needs the settings configured above)
from apps.mcp.http import with_mcp  # noqa: E402  (needs the apps loaded above)

# /mcp (the MCP server, apps.mcp) and the lifespan, which runs its session manager, go to the MCP
# app; every other request goes to Django. Both read at most the capped body.
application = RequestBodyCap(with_mcp(django_application))
