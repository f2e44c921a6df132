// Wording shared by the pages: statuses, times, durations, sync results, in the page's language.
import { formatNumber, gettext, interpolate, language, ngettext } from "./i18n.js";

const STATUS_LABELS = {
  pending: gettext("Pending"),
  indexing: gettext("Indexing"),
  ready: gettext("Ready"),
  syncing: gettext("Syncing"),
  needs_reauth: gettext("Needs reconnecting"),
  error: gettext("Error"),
};

export function statusLabel(status) {
  return STATUS_LABELS[status] ?? status;
}

// What a run is doing, from the phase of its `status` events (chat and inbox).
const PHASES = {
  queued: gettext("Waiting for a worker…"),
  planning: gettext("Planning the research…"),
  reading_images: gettext("Reading the attached images…"),
  searching: gettext("Searching your files…"),
  rewriting: gettext("Rewriting the query…"),
  reading_file: gettext("Reading a document…"),
  working: gettext("Working…"),
  generating: gettext("Writing the answer…"),
  handoff: gettext("Handing the files to the organizer…"),
  fallback: gettext("Agent mode is unavailable; answering in standard mode…"),
};

export function phaseLabel(phase) {
  return PHASES[phase] ?? `${phase[0].toUpperCase()}${phase.slice(1).replaceAll("_", " ")}…`;
}

// A file's indexing status (the files page, problem files).
const FILE_STATUS_LABELS = {
  pending: gettext("Pending"),
  indexing: gettext("Indexing"),
  indexed: gettext("Indexed"),
  skipped: gettext("Skipped"),
  failed: gettext("Failed"),
};

export function fileStatusLabel(status) {
  return FILE_STATUS_LABELS[status] ?? status;
}

const relative = new Intl.RelativeTimeFormat(language, { numeric: "auto" });
const UNITS = [
  ["year", 31536000],
  ["month", 2592000],
  ["week", 604800],
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
];

export function timeAgo(iso) {
  if (!iso) return gettext("never");
  const seconds = (new Date(iso).getTime() - Date.now()) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return gettext("just now");
}

const dateTimes = new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "short" });

// "Nov 28, 2025, 2:05 PM" in English, "28.11.2025, 14:05" in German: a date and time the page's way.
export function dateTime(iso) {
  return iso ? dateTimes.format(new Date(iso)) : "";
}

export function duration(ms) {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${formatNumber(Math.round(ms))} ms`;
  return `${formatNumber(ms / 1000, { minimumFractionDigits: 1, maximumFractionDigits: 1 })} s`;
}

// "Updated: 2 new, 1 changed" from one sync-log entry (DESIGN §5: +added ~modified -deleted).
export function syncSummary(log) {
  if (log.error) return interpolate(gettext("Last sync failed: %(error)s"), { error: log.error });
  const parts = [
    [log.added, (count) => ngettext("%(count)s new", "%(count)s new", count)],
    [log.modified, (count) => ngettext("%(count)s changed", "%(count)s changed", count)],
    [log.deleted, (count) => ngettext("%(count)s removed", "%(count)s removed", count)],
    [log.moved, (count) => ngettext("%(count)s moved", "%(count)s moved", count)],
  ]
    .filter(([count]) => count > 0)
    .map(([count, words]) => interpolate(words(count), { count }));
  return parts.length ? interpolate(gettext("Updated: %(changes)s"), { changes: parts.join(", ") }) : gettext("Up to date");
}

// "3 of 5 files indexed, 1 failed, 1 skipped": failed and skipped counts come with live events.
export function progressText(folder) {
  const parts = [
    interpolate(ngettext("%(indexed)s of %(total)s file indexed", "%(indexed)s of %(total)s files indexed", folder.files_total), {
      indexed: folder.files_indexed,
      total: folder.files_total,
    }),
  ];
  if (folder.files_failed) parts.push(interpolate(ngettext("%(count)s failed", "%(count)s failed", folder.files_failed), { count: folder.files_failed }));
  if (folder.files_skipped) parts.push(interpolate(ngettext("%(count)s skipped", "%(count)s skipped", folder.files_skipped), { count: folder.files_skipped }));
  return parts.join(", ");
}
