from tests.support.fixtures import asgi_server  # noqa: F401  (the token tests stream through a real ASGI server)
