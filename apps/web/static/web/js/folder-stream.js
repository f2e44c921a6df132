// A folder's live events (GET /api/folders/{id}/events): indexing, each file's result, syncs,
// suggestions, moves and evaluation runs. While the stream is open nothing polls; when it fails
// the page falls back to polling `poll` until the browser reconnects the stream.

const TYPES = [
  "indexing",
  "scan",
  "file",
  "sync",
  "folder_error",
  "suggestion",
  "file_moved",
  "evaluation.progress",
  "evaluation.finished",
];
const FALLBACK_POLL_MS = 3000;
// Browsers open at most six connections per server over HTTP/1.1: a page follows this many
// folders at most, leaving room for its API calls and a run's stream.
export const MAX_FOLDER_STREAMS = 4;

// `after`: the `events_after` of the folder state the page just read; only newer events apply.
export function followFolder(folderId, handlers, { poll, after = "0" } = {}) {
  let source = null;
  let pollTimer = null;
  let closed = false;

  const stopPolling = () => {
    clearInterval(pollTimer);
    pollTimer = null;
  };
  const startPolling = () => {
    if (pollTimer || !poll || closed) return;
    poll();
    pollTimer = setInterval(poll, FALLBACK_POLL_MS);
  };

  const open = () => {
    // Reconnects send Last-Event-ID themselves; the query only sets where the first connection starts.
    source = new EventSource(`/api/folders/${folderId}/events?last_event_id=${encodeURIComponent(after)}`);
    for (const type of TYPES) {
      source.addEventListener(type, (event) => {
        after = event.lastEventId || after; // a stream opened again later resumes here
        handlers[type]?.(JSON.parse(event.data));
      });
    }
    source.addEventListener("open", stopPolling);
    source.addEventListener("error", (event) => {
      if (closed) return;
      if (event instanceof MessageEvent) handlers.error?.(JSON.parse(event.data || "{}"));
      startPolling();
      if (event instanceof MessageEvent || source.readyState === EventSource.CLOSED) {
        // The server's own `error` event (the event bus is down), or a refusal: the browser will
        // not retry by itself, so try again later while polling keeps the page current.
        source.close();
        setTimeout(() => !closed && open(), FALLBACK_POLL_MS * 5);
      }
    });
  };

  open();
  return {
    close() {
      closed = true;
      stopPolling();
      source?.close();
    },
  };
}

// Leaving the page closes the streams without counting as an error.
export function closeOnLeave(streams) {
  window.addEventListener("pagehide", () => {
    for (const stream of streams()) stream.close();
  });
}
