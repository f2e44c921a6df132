"""What library announces to the apps above it; they connect in their ``AppConfig.ready()``.

Library never imports them. Receivers run at once in the sender's process, inside its
transaction when there is one, so a receiver that raises fails the write that sent it.
"""

from django.dispatch import Signal

# A folder's chunks changed and nothing of its run is left to index (or a backfill filled its
# search vectors): folder-wide statistics over the chunks are due. Sent with ``folder_id``.
folder_chunks_changed = Signal()

# A file's new chunks are written, inside the transaction that swaps them (receivers that queue
# work use ``transaction.on_commit``). Sent with ``file_id``, ``folder_id`` and ``path``.
file_indexed = Signal()
