"""Google Drive: the ``drive`` source on google-api-python-client (its emulator: ``emulators/drive``)."""
