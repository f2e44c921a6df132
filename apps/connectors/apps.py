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
        # Library keeps one sync function and one source factory per source kind; every kind's
        # live here, so library never imports a connector (nor the Google client).
        from apps.connectors.drive.connection import (
            drive_folder_readers,
            drive_folder_root_name,
            folder_drive_source,
        )
        from apps.connectors.drive.sync import drive_folder_sync
        from apps.connectors.local_sync import folder_local_source, local_folder_sync
        from apps.library.models import SourceKind
        from apps.library.sources import READER_CHECKS, ROOT_CHECKS, SOURCES, SYNCERS

        SOURCES[SourceKind.LOCAL] = folder_local_source
        SYNCERS[SourceKind.LOCAL] = local_folder_sync
        SOURCES[SourceKind.DRIVE] = folder_drive_source
        SYNCERS[SourceKind.DRIVE] = drive_folder_sync
        ROOT_CHECKS[SourceKind.DRIVE] = drive_folder_root_name
        READER_CHECKS[SourceKind.DRIVE] = drive_folder_readers
        # A logger's own filters apply before every handler, whatever level anyone sets.
        for name in _TOKEN_LOGGERS:
            logging.getLogger(name).addFilter(_not_debug)
