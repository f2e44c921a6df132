"""Stopping a run: the flag a cancel request raises, and the exception that ends the run's thread.

The flag is a Redis key (`run-cancel:<uuid>`), not a database column. The executor looks at it at
every published text chunk and at every tool boundary, which for a streaming answer is up to
twenty times a second: an EXISTS on the connection the run already publishes its events through
costs a fraction of a database round trip, takes no row lock and needs no transaction, and the
run's row stays untouched until the run ends. The database remains the record: a queued run is
cancelled there directly (the worker's claim then finds nothing to run), and a running one is
ended `cancelled` there by its executor when it sees the flag. The key expires after the longest
a run may take, so a flag nobody read (a run that finished first) cleans itself up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import redis

from apps.core import task_limits
from apps.core.events import redis_client

if TYPE_CHECKING:
    from apps.chat.types import Citation

# Longer than any run may last (its hard time limit), so the flag outlives the run it stops.
CANCEL_FLAG_SECONDS = task_limits.AGENT_RUN.hard + 60


class RunCancelled(Exception):
    """Raised in a run's executor at the first boundary after its cancel flag was raised.

    Whoever knows the sources of the text streamed so far (the runner) sets `citations`, so the
    stopped answer keeps its working `[n]` links.
    """

    def __init__(self) -> None:
        super().__init__("the run was cancelled")
        self.citations: tuple[Citation, ...] = ()


def cancel_key(run_id: object) -> str:
    return f"run-cancel:{run_id}"


def run_cancel_flag_raise(*, run_id: object, client: redis.Redis | None = None) -> None:
    (client or redis_client()).set(cancel_key(run_id), "1", ex=CANCEL_FLAG_SECONDS)


def run_cancel_flag_raised(*, run_id: object, client: redis.Redis | None = None) -> bool:
    return bool((client or redis_client()).exists(cancel_key(run_id)))
