import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from apps.core.body_cap import RequestBodyCap  # noqa: E402  (needs the settings configured above)

application = RequestBodyCap(django_application)
