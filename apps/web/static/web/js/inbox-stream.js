// The inbox's one live stream (GET /api/inbox/events): suggestions, moves, indexed files, syncs, inbox
// files left without a suggestion and guideline lines proposed, for every folder the user
// organizes, however many. One connection whatever the number of folders: a browser opens at most
// six per server. The browser resumes with Last-Event-ID after a dropped connection.

const TYPES = ["suggestion", "file_moved", "file", "sync", "inbox_file", "guideline_proposal"];
const RETRY_MS = 15000;

export function followInbox(handlers) {
  let source = null;
  let after = "0";
  let closed = false;

  const open = () => {
    source = new EventSource(`/api/inbox/events?last_event_id=${encodeURIComponent(after)}`);
    for (const type of TYPES) {
      source.addEventListener(type, (event) => {
        after = event.lastEventId || after;
        handlers[type]?.(JSON.parse(event.data));
      });
    }
    source.addEventListener("error", (event) => {
      if (closed) return;
      if (event instanceof MessageEvent || source.readyState === EventSource.CLOSED) {
        // The server's own `error` event (the bus is down, or no folder to follow yet) or a refusal:
        // the browser will not retry by itself.
        source.close();
        setTimeout(() => !closed && open(), RETRY_MS);
      }
    });
  };

  open();
  return {
    close() {
      closed = true;
      source?.close();
    },
  };
}
