import logging

from django.apps import AppConfig

# requests-oauthlib logs, at DEBUG, the token response, the request body (code and PKCE verifier)
# and the Basic auth header (client secret), all before any handler could redact them.
_TOKEN_LOGGERS = ["requests_oauthlib.oauth2_session"]


def _not_debug(record: logging.LogRecord) -> bool:
    return record.levelno > logging.DEBUG


class ConnectorsConfig(AppConfig):
    name = "apps.connectors"
    label = "connectors"

    def ready(self) -> None:
        # Library keeps one sync function and one source factory per source kind; Drive's live
        # here, so library never imports the Google client.
        from apps.connectors.drive.connection import folder_drive_source
        from apps.connectors.drive.sync import drive_folder_sync
        from apps.library.indexing import SOURCES
        from apps.library.models import SourceKind
        from apps.library.sync import SYNCERS

        SYNCERS[SourceKind.DRIVE] = drive_folder_sync
        SOURCES[SourceKind.DRIVE] = folder_drive_source
        # A logger's own filters apply before every handler, whatever level anyone sets.
        for name in _TOKEN_LOGGERS:
            logging.getLogger(name).addFilter(_not_debug)
