// The folder list: status, counts, last sync and its result, a Sync button, the Add folder form.
import { api, results } from "./api.js";
import { clone, field } from "./dom.js";
import { statusLabel, syncSummary, timeAgo } from "./format.js";

const POLL_MS = 2000;
const SYNC_WAIT_MS = 120000;
const BUSY = new Set(["pending", "indexing", "syncing"]);

const list = document.getElementById("folder-list");
const listStatus = document.getElementById("folders-status");
const cards = new Map(); // folder id -> {card, folder, summaryFor}
const syncing = new Map(); // folder id -> {since: last_synced_at before the click, until: deadline}
let pollTimer = null;

async function refresh() {
  clearTimeout(pollTimer);
  let folders;
  try {
    folders = results(await api("/api/folders?limit=200"));
  } catch (error) {
    listStatus.textContent = `Could not load folders: ${error.message}`;
    return;
  }
  listStatus.textContent = folders.length ? "" : "No folders yet. Add one to start asking questions.";
  for (const folder of folders) render(folder);
  keepOrder(folders);
  for (const id of [...cards.keys()]) {
    if (!folders.some((folder) => folder.id === id)) {
      cards.get(id).card.remove();
      cards.delete(id);
    }
  }
  if (folders.some((folder) => BUSY.has(folder.status)) || syncing.size) pollTimer = setTimeout(refresh, POLL_MS);
}

// New folders come first, as the API lists them; nodes only move when the order changed, so a
// focused Sync button keeps its focus across refreshes.
function keepOrder(folders) {
  const wanted = folders.map((folder) => cards.get(folder.id).card);
  if (wanted.some((card, index) => list.children[index] !== card)) list.append(...wanted);
}

function render(folder) {
  let entry = cards.get(folder.id);
  if (!entry) {
    const card = clone("folder-card");
    card.dataset.folderId = folder.id;
    field(card, "link").href = `/folders/${folder.id}/`;
    field(card, "chat").href = `/folders/${folder.id}/`;
    field(card, "chat").setAttribute("aria-label", `Chat with ${folder.name}`);
    const button = card.querySelector('[data-action="sync"]');
    button.setAttribute("aria-label", `Sync ${folder.name} now`);
    button.addEventListener("click", () => {
      if (cards.get(folder.id).folder.status === "needs_reauth") reconnectDrive();
      else startSync(folder.id);
    });
    list.append(card);
    entry = { card, folder, summaryFor: undefined };
    cards.set(folder.id, entry);
  }
  entry.folder = folder;
  const { card } = entry;
  card.dataset.status = folder.status;
  field(card, "link").textContent = folder.name;
  const badge = field(card, "status");
  badge.textContent = statusLabel(folder.status);
  badge.dataset.status = folder.status;
  field(card, "source").textContent = folder.source === "drive" ? "Google Drive" : "Local directory";
  field(card, "location").textContent = folder.external_id;
  const progress = field(card, "progress");
  progress.max = Math.max(folder.files_total, 1);
  progress.value = folder.files_indexed;
  field(card, "counts").textContent = `${folder.files_indexed} of ${folder.files_total} files indexed`;
  const lastSync = field(card, "last-sync");
  lastSync.textContent = `Last sync: ${timeAgo(folder.last_synced_at)}`;
  lastSync.title = folder.last_synced_at ?? "";
  const error = field(card, "error");
  error.textContent = folder.last_error;
  error.hidden = !folder.last_error;
  updateSync(entry);
}

function updateSync(entry) {
  const { card, folder } = entry;
  const pending = syncing.get(folder.id);
  const result = field(card, "sync-result");
  const button = card.querySelector('[data-action="sync"]');
  if (pending && folder.last_synced_at === pending.since && Date.now() < pending.until) {
    button.disabled = true;
    result.textContent = "Checking for updates…";
    return;
  }
  if (pending && folder.last_synced_at === pending.since) {
    result.textContent = "The sync is taking a while; it goes on in the background.";
  }
  syncing.delete(folder.id);
  button.disabled = folder.status === "syncing";
  button.textContent = folder.status === "needs_reauth" ? "Reconnect Drive" : "Sync now";
  if (folder.last_synced_at && entry.summaryFor !== folder.last_synced_at) {
    entry.summaryFor = folder.last_synced_at;
    showLastSyncResult(folder.id, result);
  }
}

async function showLastSyncResult(folderId, element) {
  try {
    const [log] = results(await api(`/api/folders/${folderId}/sync-log?limit=1`));
    element.textContent = log ? syncSummary(log) : "";
  } catch {
    element.textContent = ""; // no sync history to show; the last-sync time says enough
  }
}

async function startSync(folderId) {
  const entry = cards.get(folderId);
  syncing.set(folderId, { since: entry.folder.last_synced_at, until: Date.now() + SYNC_WAIT_MS });
  updateSync(entry);
  try {
    render(await api(`/api/folders/${folderId}/sync`, { method: "POST" }));
  } catch (error) {
    syncing.delete(folderId);
    updateSync(entry);
    field(entry.card, "sync-result").textContent = `Sync failed: ${error.message}`;
    return;
  }
  refresh();
}

async function reconnectDrive() {
  try {
    window.location.assign((await api("/api/drive/connect")).auth_url);
  } catch (error) {
    listStatus.textContent = `Could not reconnect Google Drive: ${error.message}`;
  }
}

function setUpAddForm() {
  const form = document.getElementById("add-folder-form");
  const errorBox = document.getElementById("add-folder-error");
  const showSource = () => {
    const source = form.elements.source.value;
    for (const group of form.querySelectorAll("[data-source]")) group.hidden = group.dataset.source !== source;
  };
  form.addEventListener("change", showSource);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorBox.textContent = "";
    const source = form.elements.source.value;
    const location = source === "local" ? "path" : "drive_folder_id";
    // Empty fields are left out: the API then says what is required rather than "may not be blank".
    const values = { source, [location]: form.elements[location].value.trim(), name: form.elements.name.value.trim() };
    const body = Object.fromEntries(Object.entries(values).filter(([, value]) => value));
    const submit = form.querySelector('button[type="submit"]');
    submit.disabled = true;
    try {
      const folder = await api("/api/folders", { method: "POST", body });
      form.reset();
      showSource();
      render(folder);
      listStatus.textContent = `Added ${folder.name}. Indexing has started.`;
      refresh();
    } catch (error) {
      errorBox.textContent = error.message;
    } finally {
      submit.disabled = false;
    }
  });
}

setUpAddForm();
refresh();
