"""Google Drive: the ``drive`` source on google-api-python-client, and a local Drive emulator."""
