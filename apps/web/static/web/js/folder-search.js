// A folder's search page: a query, a mode (hybrid, keyword, vector) and filters (path prefix,
// type, modified from/until) to POST /api/folders/{id}/search; ranked passages with the query's
// words marked, each opening its document page at the passage. The search is in the page's URL.
import { api } from "./api.js";
import { clone, field } from "./dom.js";
import { locationText } from "./file-format.js";
import { highlighted, queryPattern } from "./highlight.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const RESULTS = 20;
const PARAMS = ["q", "mode", "path", "type", "from", "to"];

const root = document.getElementById("folder-search");
const folderId = root.dataset.folderId;
const form = document.getElementById("search-form");
const statusLine = document.getElementById("search-status");
const list = document.getElementById("search-results");
let searching = 0; // the newest search's number: an older answer arriving late is dropped

function readUrl() {
  const params = new URLSearchParams(window.location.search);
  for (const name of PARAMS) {
    const value = params.get(name);
    if (value !== null) form.elements[name].value = value;
  }
  if (["path", "type", "from", "to"].some((name) => params.get(name))) {
    document.getElementById("search-filters").open = true;
  }
  return params.has("q");
}

function values() {
  return Object.fromEntries(PARAMS.map((name) => [name, form.elements[name].value.trim()]));
}

// Dates are the user's days: from the start of "from" to the end of "until", in their time zone.
function filters({ path, type, from, to }) {
  const chosen = {};
  if (path) chosen.path_prefix = path;
  if (type) chosen.mime_types = [type];
  if (from) chosen.modified_after = new Date(`${from}T00:00:00`).toISOString();
  if (to) {
    const end = new Date(`${to}T00:00:00`);
    end.setDate(end.getDate() + 1);
    chosen.modified_before = end.toISOString();
  }
  return chosen;
}

async function search() {
  const ticket = ++searching;
  const current = values();
  const params = new URLSearchParams(Object.entries(current).filter(([name, value]) => value && !(name === "mode" && value === "hybrid")));
  if (!params.has("q")) params.set("q", current.q);
  history.replaceState(null, "", `?${params}`);
  statusLine.textContent = gettext("Searching…");
  let answer;
  try {
    answer = await api(`/api/folders/${folderId}/search`, {
      method: "POST",
      body: { query: current.q, k: RESULTS, mode: current.mode, filters: filters(current) },
    });
  } catch (error) {
    if (ticket === searching) statusLine.textContent = interpolate(gettext("The search failed: %(reason)s"), { reason: error.message });
    return;
  }
  if (ticket !== searching) return;
  const pattern = queryPattern(current.q);
  list.replaceChildren(...answer.results.map((hit, index) => result(hit, index, pattern)));
  const count = answer.results.length;
  // Meaning always finds something: when no passage holds the words, say so before the nearest ones.
  const onlyClosest = count > 0 && answer.words_matched === false;
  if (onlyClosest) {
    const text = ngettext(
      "No passage contains “%(query)s”. The closest in meaning:",
      "No passage contains “%(query)s”. The %(count)s closest in meaning:",
      count,
    );
    statusLine.textContent = interpolate(text, { query: current.q.trim(), count });
  } else {
    statusLine.textContent = count
      ? interpolate(ngettext("%(count)s passage in %(ms)s ms", "%(count)s passages in %(ms)s ms", count), {
          count,
          ms: Math.round(answer.took_ms),
        })
      : gettext("No passage matches. Try other words, another mode, or fewer filters.");
  }
}

function result(hit, index, pattern) {
  const item = clone("search-hit");
  const link = field(item, "link");
  link.href = `/files/${hit.file_id}?chunk=${hit.chunk_id}`;
  field(item, "name").textContent = `${index + 1}. ${hit.file_name}`;
  field(item, "path").textContent = hit.path;
  field(item, "location").textContent = locationText(hit.location);
  field(item, "score").textContent = legs(hit);
  field(item, "text").replaceChildren(...highlighted(hit.text, pattern));
  return item;
}

// Which searches found the passage, and at what rank: "keyword #2 · meaning #1".
function legs(hit) {
  const parts = [];
  if (hit.keyword_rank) parts.push(interpolate(gettext("keyword #%(rank)s"), { rank: hit.keyword_rank }));
  if (hit.vector_rank) parts.push(interpolate(gettext("meaning #%(rank)s"), { rank: hit.vector_rank }));
  return parts.join(" · ");
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  search();
});
// Changing the mode or a filter searches again when there is a search to redo.
form.addEventListener("change", (event) => {
  if (event.target.name !== "q" && form.elements.q.value.trim()) search();
});

if (readUrl()) search();
form.elements.q.focus();
