from django.apps import AppConfig


class EmulatorsConfig(AppConfig):
    """Registered (config/settings.py) only so that `manage.py drive_emulator` is found."""

    name = "emulators"
    label = "emulators"
