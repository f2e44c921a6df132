// Following a run's server-sent events. EventSource sends the session cookie and, when the
// connection drops, reconnects by itself with Last-Event-ID, so nothing is missed or repeated.

const TYPES = ["status", "tool_call", "tool_result", "text_delta", "text_reset", "notice", "message", "suggestion"];

// Leaving the page aborts the stream, which reads as "connection closed": that is no reason to
// forget the run, whose answer the next page load replays.
let leaving = false;
window.addEventListener("beforeunload", () => {
  leaving = true;
});
window.addEventListener("pageshow", () => {
  leaving = false;
});

export function followRun(eventsUrl, handlers) {
  const source = new EventSource(eventsUrl);
  for (const type of TYPES) {
    source.addEventListener(type, (event) => handlers[type]?.(JSON.parse(event.data), event.lastEventId));
  }
  source.addEventListener("done", (event) => {
    source.close();
    handlers.done?.(JSON.parse(event.data));
  });
  source.addEventListener("error", (event) => {
    if (leaving) {
      source.close();
    } else if (event instanceof MessageEvent && event.data) {
      // The run's own `error` event, not a connection problem.
      source.close();
      handlers.error?.(JSON.parse(event.data));
    } else if (source.readyState === EventSource.CLOSED) {
      handlers.lost?.(); // refused (401/404): the browser will not retry
    } else {
      handlers.reconnecting?.();
    }
  });
  source.addEventListener("open", () => handlers.open?.());
  return source;
}
