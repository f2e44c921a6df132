// A folder's files: filter by name, status and type, sort, page through. The filters live in the
// page's URL, so a reload, Back or a shared link shows the same list.
import { api, results } from "./api.js";
import { clone, field } from "./dom.js";
import { fileSize, fileType } from "./file-format.js";
import { dateTime, fileStatusLabel } from "./format.js";
import { formatNumber, gettext, interpolate, ngettext } from "./i18n.js";

const PAGE_SIZE = 50;
const FILTERS = ["name", "status", "type", "ordering"];

const root = document.getElementById("folder-files");
const folderId = root.dataset.folderId;
const form = document.getElementById("files-filters");
const statusLine = document.getElementById("files-status-line");
const table = document.getElementById("files-table");
const rows = document.getElementById("files-rows");
const previous = document.getElementById("files-previous");
const next = document.getElementById("files-next");
let offset = 0;
let loading = 0; // the newest request's number: an older answer arriving late is dropped

function readUrl() {
  const params = new URLSearchParams(window.location.search);
  for (const name of FILTERS) form.elements[name].value = params.get(name) ?? (name === "ordering" ? "path" : "");
  offset = Math.max(0, Number.parseInt(params.get("offset") ?? "0", 10) || 0);
}

function filters() {
  const values = {};
  for (const name of FILTERS) {
    const value = form.elements[name].value.trim();
    if (value && !(name === "ordering" && value === "path")) values[name] = value;
  }
  return values;
}

function writeUrl() {
  const params = new URLSearchParams(filters());
  if (offset) params.set("offset", offset);
  const query = params.toString();
  history.replaceState(null, "", query ? `?${query}` : window.location.pathname);
}

async function load() {
  const ticket = ++loading;
  writeUrl();
  const params = new URLSearchParams({ ...filters(), limit: PAGE_SIZE, offset });
  statusLine.textContent = gettext("Loading files…");
  let page;
  try {
    page = await api(`/api/folders/${folderId}/files?${params}`);
  } catch (error) {
    if (ticket === loading) statusLine.textContent = interpolate(gettext("Could not load the files: %(reason)s"), { reason: error.message });
    return;
  }
  if (ticket !== loading) return;
  const files = results(page);
  rows.replaceChildren(...files.map(row));
  table.hidden = files.length === 0;
  statusLine.textContent = summary(page, files.length);
  previous.disabled = offset === 0;
  next.disabled = !page.next;
  // The page button just pressed may be disabled now (first or last page): keep focus on the pager.
  if (document.activeElement?.disabled) (previous.disabled ? next : previous).focus();
}

function summary(page, shown) {
  const filtered = Object.keys(filters()).some((name) => name !== "ordering");
  if (!shown) return filtered ? gettext("No file matches these filters.") : gettext("This folder has no files yet.");
  const total = page.count_exact ? formatNumber(page.count) : interpolate(gettext("more than %(count)s"), { count: page.count - 1 });
  const values = { first: offset + 1, last: offset + shown, total };
  const text = filtered
    ? ngettext("Showing %(first)s–%(last)s of %(total)s matching file", "Showing %(first)s–%(last)s of %(total)s matching files", page.count)
    : ngettext("Showing %(first)s–%(last)s of %(total)s file", "Showing %(first)s–%(last)s of %(total)s files", page.count);
  return interpolate(text, values);
}

function row(file) {
  const tr = clone("file-row");
  const link = field(tr, "path");
  link.textContent = file.path;
  link.href = `/files/${file.id}`;
  const badge = field(tr, "status");
  badge.textContent = fileStatusLabel(file.status);
  badge.dataset.status = file.status;
  field(tr, "reason").textContent = file.error;
  field(tr, "type").textContent = fileType(file);
  field(tr, "type").title = file.mime_type;
  field(tr, "size").textContent = fileSize(file.size);
  const modified = field(tr, "modified");
  modified.textContent = file.modified_time ? dateTime(file.modified_time) : "—";
  if (file.modified_time) modified.dateTime = file.modified_time;
  field(tr, "chunks").textContent = formatNumber(file.chunk_count);
  return tr;
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  offset = 0;
  load();
});
// A choice in a list applies at once; the name applies on Enter or Apply.
form.addEventListener("change", (event) => {
  if (event.target.tagName === "SELECT") {
    offset = 0;
    load();
  }
});
previous.addEventListener("click", () => {
  offset = Math.max(0, offset - PAGE_SIZE);
  load();
});
next.addEventListener("click", () => {
  offset += PAGE_SIZE;
  load();
});

readUrl();
load();
