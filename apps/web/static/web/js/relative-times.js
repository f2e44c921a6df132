// Relative times ("3 minutes ago") that stay true while a page is open: every page loads this
// module (base.html), which re-renders each <time data-relative datetime="..."> every 30 s,
// whichever script made it. Scripts make them with relativeTime().
import { dateTime, timeAgo } from "./format.js";
import { gettext } from "./i18n.js";

export const REFRESH_MS = 30_000;

// A <time> saying how long ago `iso` was ("never" without one), its full date on hover.
export function relativeTime(iso) {
  const element = document.createElement("time");
  element.dataset.relative = "";
  setRelativeTime(element, iso);
  return element;
}

// Points an existing <time> at `iso` (empty: no text) and keeps it ticking.
export function setRelativeTime(element, iso, { empty = gettext("never") } = {}) {
  element.dataset.relative = "";
  element.dataset.empty = empty;
  element.dateTime = iso ?? "";
  element.title = dateTime(iso);
  render(element);
}

function render(element) {
  element.textContent = element.dateTime ? timeAgo(element.dateTime) : element.dataset.empty ?? "";
}

export function refreshRelativeTimes(root = document) {
  for (const element of root.querySelectorAll("time[data-relative]")) render(element);
}

setInterval(refreshRelativeTimes, REFRESH_MS);
