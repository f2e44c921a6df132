// Wording shared by the pages: statuses, times, durations, sync results.

const STATUS_LABELS = {
  pending: "Pending",
  indexing: "Indexing",
  ready: "Ready",
  syncing: "Syncing",
  needs_reauth: "Needs reconnecting",
  error: "Error",
};

export function statusLabel(status) {
  return STATUS_LABELS[status] ?? status;
}

const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const UNITS = [
  ["year", 31536000],
  ["month", 2592000],
  ["week", 604800],
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
];

export function timeAgo(iso) {
  if (!iso) return "never";
  const seconds = (new Date(iso).getTime() - Date.now()) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return "just now";
}

export function dateTime(iso) {
  return iso ? new Date(iso).toLocaleString() : "";
}

export function duration(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

// "Updated: 2 new, 1 changed" from one sync-log entry (DESIGN §5: +added ~modified -deleted).
export function syncSummary(log) {
  if (log.error) return `Last sync failed: ${log.error}`;
  const parts = [
    [log.added, "new"],
    [log.modified, "changed"],
    [log.deleted, "removed"],
    [log.moved, "moved"],
  ]
    .filter(([count]) => count > 0)
    .map(([count, word]) => `${count} ${word}`);
  return parts.length ? `Updated: ${parts.join(", ")}` : "Up to date";
}

// "3 of 5 files indexed, 1 failed, 1 skipped": failed and skipped counts come with live events.
export function progressText(folder) {
  const parts = [`${folder.files_indexed} of ${folder.files_total} files indexed`];
  if (folder.files_failed) parts.push(`${folder.files_failed} failed`);
  if (folder.files_skipped) parts.push(`${folder.files_skipped} skipped`);
  return parts.join(", ");
}
