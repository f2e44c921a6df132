// The folder list: status, live progress and failures (from each folder's event stream), last
// sync and its result, a Sync button, and the Add folder form (a local path or a Drive folder
// picked from the user's Drive).
import { api, results } from "./api.js";
import { clone, field } from "./dom.js";
import { fileSize } from "./file-format.js";
import { setUpDrivePanel } from "./drive-picker.js";
import { MAX_FOLDER_STREAMS, closeOnLeave, followFolder } from "./folder-stream.js";
import { progressText, statusLabel, syncSummary } from "./format.js";
import { gettext, interpolate, ngettext } from "./i18n.js";
import { relativeTime } from "./relative-times.js";
import { openShareDialog } from "./share.js";

const SYNC_WAIT_MS = 120000;
const BUSY = new Set(["pending", "indexing", "syncing"]);

const list = document.getElementById("folder-list");
const sharedList = document.getElementById("shared-list");
const listStatus = document.getElementById("folders-status");
const cards = new Map(); // folder id -> {card, folder, summaryFor, stream}
const syncing = new Map(); // folder id -> {since: last_synced_at before the click, until: deadline}

async function refresh() {
  let folders;
  try {
    folders = results(await api("/api/folders?limit=200"));
  } catch (error) {
    listStatus.textContent = interpolate(gettext("Could not load folders: %(reason)s"), { reason: error.message });
    return;
  }
  listStatus.textContent = folders.length ? "" : gettext("No folders yet. Add one to start asking questions.");
  for (const folder of folders) render(folder);
  keepOrder(folders);
  for (const id of [...cards.keys()]) {
    if (!folders.some((folder) => folder.id === id)) {
      cards.get(id).stream?.close();
      cards.get(id).card.remove();
      cards.delete(id);
    }
  }
  follow();
}

async function refreshOne(folderId) {
  try {
    const folder = await api(`/api/folders/${folderId}`);
    render(folder);
    return folder.events_after;
  } catch {
    // the stream or the next load brings it; a failed poll changes nothing on the page
  }
}

// Streams for the busy folders first, then the newest, up to MAX_FOLDER_STREAMS.
function follow() {
  const entries = [...cards.values()];
  const wanted = [
    ...entries.filter((entry) => BUSY.has(entry.folder.status) || syncing.has(entry.folder.id)),
    ...entries,
  ];
  const chosen = new Set([...new Set(wanted)].slice(0, MAX_FOLDER_STREAMS));
  for (const entry of entries) {
    if (chosen.has(entry) && !entry.stream) openStream(entry);
    if (!chosen.has(entry) && entry.stream && !BUSY.has(entry.folder.status)) {
      entry.stream.close();
      entry.stream = null;
    }
  }
}

// The folder's current state first, then its events after that state.
async function openStream(entry) {
  const placeholder = { closed: false, close: () => (placeholder.closed = true) };
  entry.stream = placeholder;
  const after = (await refreshOne(entry.folder.id)) ?? "0";
  if (!placeholder.closed && cards.get(entry.folder.id) === entry) entry.stream = stream(entry.folder.id, after);
}

function stream(folderId, after) {
  const update = (data) => applyCounts(folderId, data);
  return followFolder(
    folderId,
    {
      indexing: (data) => {
        const entry = cards.get(folderId);
        if (entry) render({ ...entry.folder, status: "indexing" });
        update(data);
      },
      scan: update,
      file: update,
      sync: (data) => {
        const entry = cards.get(folderId);
        if (!entry) return;
        entry.summaryFor = data.created_at;
        render({
          ...entry.folder,
          last_synced_at: data.created_at,
          last_sync: { ...data, id: data.sync_log_id },
          last_error: data.error || entry.folder.last_error,
        });
        field(entry.card, "sync-result").textContent = syncSummary(data);
      },
      folder_error: (data) => {
        const entry = cards.get(folderId);
        if (entry) render({ ...entry.folder, status: data.folder_status, last_error: data.error });
      },
    },
    { poll: () => refreshOne(folderId), after },
  );
}

function applyCounts(folderId, data) {
  const entry = cards.get(folderId);
  if (!entry || data.files_total === undefined) return;
  // A run that just finished also changed what events do not carry (the last sync time).
  if (BUSY.has(entry.folder.status) && data.folder_status === "ready") refreshOne(folderId);
  render({
    ...entry.folder,
    status: data.folder_status ?? entry.folder.status,
    files_total: data.files_total,
    files_indexed: data.files_indexed,
    files_done: data.files_done,
    files_failed: data.files_failed,
    files_skipped: data.files_skipped,
  });
}

// New folders come first, as the API lists them; nodes only move when the order changed, so a
// focused Sync button keeps its focus across refreshes.
function keepOrder(folders) {
  for (const [target, mine] of [[list, true], [sharedList, false]]) {
    const wanted = folders.filter((folder) => (folder.role === "owner") === mine).map((folder) => cards.get(folder.id).card);
    if (wanted.some((card, index) => target.children[index] !== card)) target.append(...wanted);
  }
  document.getElementById("shared-section").hidden = !folders.some((folder) => folder.role !== "owner");
}

function render(folder) {
  let entry = cards.get(folder.id);
  if (!entry) {
    const card = clone("folder-card");
    card.dataset.folderId = folder.id;
    field(card, "link").href = `/folders/${folder.id}/`;
    field(card, "chat").href = `/folders/${folder.id}/`;
    field(card, "progress").setAttribute("aria-label", interpolate(gettext("Files of %(name)s done"), { name: folder.name }));
    for (const page of ["files", "search", "settings"]) field(card, page).href = `/folders/${folder.id}/${page}`;
    const button = card.querySelector('[data-action="sync"]');
    button.addEventListener("click", () => {
      if (cards.get(folder.id).folder.status === "needs_reauth") reconnectDrive();
      else startSync(folder.id);
    });
    card.querySelector('[data-action="share"]').addEventListener("click", () => openShareDialog(cards.get(folder.id).folder));
    (folder.role === "owner" ? list : sharedList).prepend(card);
    entry = { card, folder, summaryFor: undefined, stream: null };
    cards.set(folder.id, entry);
  }
  // Counts of failed and skipped files come with events only; a reload of the row keeps them.
  entry.folder = { files_failed: entry.folder.files_failed, files_skipped: entry.folder.files_skipped, ...folder };
  folder = entry.folder;
  const { card } = entry;
  card.dataset.status = folder.status;
  field(card, "link").textContent = folder.name;
  // Each accessible name starts with the button's visible word, so speech users can say what they see.
  for (const [page, label] of [
    ["chat", gettext("Chat with %(name)s")],
    ["files", gettext("Files of %(name)s")],
    ["search", gettext("Search %(name)s")],
    ["settings", gettext("Settings of %(name)s")],
  ]) {
    field(card, page).setAttribute("aria-label", interpolate(label, { name: folder.name }));
  }
  const badge = field(card, "status");
  badge.textContent = statusLabel(folder.status);
  badge.dataset.status = folder.status;
  field(card, "source").textContent = folder.source === "drive" ? "Google Drive" : gettext("Local directory");
  field(card, "location").textContent = folder.source === "drive" ? folder.name : folder.external_id;
  const shared = field(card, "shared");
  shared.hidden = folder.role === "owner";
  const sharedText =
    folder.role === "editor" ? gettext("Shared by %(owner)s · you are an editor") : gettext("Shared by %(owner)s · you are a viewer");
  shared.textContent = interpolate(sharedText, { owner: folder.owner });
  card.querySelector('[data-action="share"]').hidden = folder.role !== "owner";
  const done = folder.files_done ?? (BUSY.has(folder.status) ? folder.files_indexed : folder.files_total);
  const progress = field(card, "progress");
  progress.max = Math.max(folder.files_total, 1);
  progress.value = folder.files_total ? done : 0;
  field(card, "counts").textContent = progressText(folder);
  const lastSync = field(card, "last-sync");
  lastSync.replaceChildren(`${gettext("Last sync:")} `, relativeTime(folder.last_synced_at));
  const error = field(card, "error");
  error.textContent = folder.last_error;
  error.hidden = !folder.last_error;
  const failures = field(card, "failures");
  const failed = folder.files_failed;
  const failedText = ngettext("%(count)s failed: see the folder page to retry.", "%(count)s failed: see the folder page to retry.", failed);
  failures.textContent = failed ? interpolate(failedText, { count: failed }) : "";
  failures.hidden = !folder.files_failed;
  updateSync(entry);
}

function updateSync(entry) {
  const { card, folder } = entry;
  const pending = syncing.get(folder.id);
  const result = field(card, "sync-result");
  const button = card.querySelector('[data-action="sync"]');
  const reconnect = folder.status === "needs_reauth";
  // Only editors and the owner may sync; a viewer is not offered what would be refused.
  button.hidden = folder.role === "viewer";
  button.textContent = reconnect ? gettext("Reconnect") : gettext("Sync now");
  // The accessible name starts with the visible words, so speech users can say what they see.
  const label = reconnect ? gettext("Reconnect Google Drive for %(name)s") : gettext("Sync now: %(name)s");
  button.setAttribute("aria-label", interpolate(label, { name: folder.name }));
  if (pending && folder.last_synced_at === pending.since && Date.now() < pending.until) {
    button.disabled = true;
    result.classList.remove("failed");
    result.textContent = gettext("Checking for updates…");
    return;
  }
  if (pending && folder.last_synced_at === pending.since) {
    result.textContent = gettext("The sync is taking a while; it goes on in the background.");
  }
  syncing.delete(folder.id);
  button.disabled = folder.status === "syncing";
  if (folder.last_synced_at && entry.summaryFor !== folder.last_synced_at) {
    entry.summaryFor = folder.last_synced_at;
    showLastSyncResult(result, folder.last_sync);
  }
}

// The folder comes with its newest sync (`last_sync`): no request per card.
function showLastSyncResult(element, log) {
  // A refusal said since that sync stays: only a newer sync's summary replaces it. Compared by the
  // sync log's id: the folder's last_synced_at and the log's created_at differ by milliseconds.
  if (element.classList.contains("failed") && element.dataset.failedAfter === String(log?.id ?? "")) return;
  element.classList.remove("failed");
  element.textContent = log ? syncSummary(log) : "";
}

async function startSync(folderId) {
  const entry = cards.get(folderId);
  syncing.set(folderId, { since: entry.folder.last_synced_at, until: Date.now() + SYNC_WAIT_MS });
  updateSync(entry);
  follow();
  try {
    render(await api(`/api/folders/${folderId}/sync`, { method: "POST" }));
  } catch (error) {
    syncing.delete(folderId);
    updateSync(entry);
    const result = field(entry.card, "sync-result");
    result.classList.add("failed");
    result.dataset.failedAfter = String(entry.folder.last_sync?.id ?? "");
    result.textContent = interpolate(gettext("Sync failed: %(reason)s"), { reason: error.message });
    return;
  }
  // The stream's `sync` event ends the wait; without a stream this is the only check left.
  setTimeout(() => syncing.has(folderId) && refreshOne(folderId), SYNC_WAIT_MS);
}

async function reconnectDrive() {
  try {
    window.location.assign((await api("/api/drive/connect")).auth_url);
  } catch (error) {
    listStatus.textContent = interpolate(gettext("Could not reconnect Google Drive: %(reason)s"), { reason: error.message });
  }
}

function added(folder) {
  render(folder);
  listStatus.textContent = interpolate(gettext("Added %(name)s. Indexing has started."), { name: folder.name });
  follow();
  showQuota();
}

// "3 of 5 folders · 1,204 of 2,000 files · 1.2 GB of 5 GB": only the limits that are set.
async function showQuota() {
  const line = document.getElementById("quota-usage");
  let quota;
  try {
    quota = await api("/api/quota");
  } catch {
    return; // the line is a courtesy; the limits themselves are enforced server-side
  }
  const texts = {
    folders: (limit) => ngettext("%(used)s of %(limit)s folder", "%(used)s of %(limit)s folders", limit),
    files: (limit) => ngettext("%(used)s of %(limit)s file", "%(used)s of %(limit)s files", limit),
    bytes: () => gettext("%(used)s of %(limit)s"),
    chunks: (limit) => ngettext("%(used)s of %(limit)s chunk", "%(used)s of %(limit)s chunks", limit),
  };
  const parts = Object.entries(texts)
    .filter(([key]) => quota.limits[key] !== null)
    .map(([key, text]) => {
      const [used, limit] = [quota.used[key], quota.limits[key]];
      const values = key === "bytes" ? { used: fileSize(used), limit: fileSize(limit) } : { used, limit };
      return interpolate(text(limit), values);
    });
  line.textContent = parts.join(" · ");
  line.hidden = parts.length === 0;
}

function setUpAddForm() {
  const form = document.getElementById("add-folder-form");
  const errorBox = document.getElementById("add-folder-error");
  const drive = setUpDrivePanel({ onAdded: added, errorBox });
  const showSource = () => {
    const source = form.elements.source.value;
    for (const group of form.querySelectorAll("[data-source]")) group.hidden = group.dataset.source !== source;
    if (source === "drive") drive.show();
  };
  form.addEventListener("change", (event) => {
    if (event.target.name === "source") showSource();
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorBox.textContent = "";
    if (form.elements.source.value !== "local") return; // Drive folders are added from the picker
    // Empty fields are left out: the API then says what is required rather than "may not be blank".
    const values = { source: "local", path: form.elements.path.value.trim(), name: form.elements.name.value.trim() };
    const body = Object.fromEntries(Object.entries(values).filter(([, value]) => value));
    const submit = form.querySelector('button[type="submit"]');
    submit.disabled = true;
    try {
      const folder = await api("/api/folders", { method: "POST", body });
      form.reset();
      showSource();
      added(folder);
    } catch (error) {
      errorBox.textContent = error.message;
    } finally {
      submit.disabled = false;
    }
  });
  // Back from Google's consent page: show the Drive side of the form with its result.
  const notice = document.getElementById("drive-notice");
  if (notice) {
    form.elements.source.value = "drive";
    history.replaceState(null, "", "/"); // a reload must not replay the one-time callback
  }
  // The form as it stands now: a source picked before this script ran, or restored by the browser on
  // Back, fired its change event before the listener above existed.
  showSource();
  notice?.focus();
}

closeOnLeave(() => [...cards.values()].map((entry) => entry.stream).filter(Boolean));
setUpAddForm();
refresh();
showQuota();
