// A folder's settings: rename, sync interval, sync now, re-index, exclude patterns, language, disconnect
// Drive, remove. Each form says what the API answered: a refusal in its alert, success in its status.
import { api } from "./api.js";
import { closeOnLeave, followFolder } from "./folder-stream.js";
import { statusLabel, timeAgo } from "./format.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const root = document.getElementById("folder-settings");
const folderId = root.dataset.folderId;
const folderUrl = `/api/folders/${folderId}`;

function byId(id) {
  return document.getElementById(id);
}

// One write from a form: its button busy meanwhile, the API's message or `done` shown after.
async function submit({ form, button, errorBox, doneBox, call, done }) {
  errorBox.textContent = "";
  if (doneBox) doneBox.textContent = "";
  button.disabled = true;
  try {
    const answer = await call();
    if (doneBox) doneBox.textContent = done(answer);
    return answer;
  } catch (error) {
    errorBox.textContent = error.message;
    form?.querySelector("input, textarea")?.focus();
    return undefined;
  } finally {
    button.disabled = false;
  }
}

function showFolder(folder) {
  byId("last-sync").textContent = timeAgo(folder.last_synced_at);
  byId("last-sync").title = folder.last_synced_at ?? "";
  const state = byId("folder-state");
  state.textContent = statusLabel(folder.status);
  state.dataset.status = folder.status;
}

function setUpRename() {
  const form = byId("rename-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = form.elements.name.value.trim();
    const folder = await submit({
      form,
      button: form.querySelector("button"),
      errorBox: byId("rename-error"),
      doneBox: byId("rename-done"),
      call: () => api(folderUrl, { method: "PATCH", body: { name } }),
      done: (saved) => interpolate(gettext("Renamed to %(name)s."), { name: saved.name }),
    });
    if (folder) {
      root.dataset.folderName = folder.name;
      document.querySelector(".folder-page-head h1").textContent = folder.name;
      // The title's form is the page's: its last part is the site's name.
      document.title = `${interpolate(gettext("Settings · %(name)s"), { name: folder.name })} · ${document.title.split(" · ").at(-1)}`;
    }
  });
}

function setUpInterval() {
  const form = byId("interval-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = form.elements.minutes;
    const minutes = Number(input.value);
    // Said in the form's own words (minutes), before the API would refuse it in seconds.
    if (!input.checkValidity()) {
      byId("interval-done").textContent = "";
      // The field's own bounds, written as its min and max are (no digit grouping).
      byId("interval-error").textContent = interpolate(gettext("Choose a whole number of minutes from %(low)s to %(high)s."), {
        low: input.min,
        high: input.max,
      });
      input.focus();
      return;
    }
    submit({
      form,
      button: form.querySelector("button"),
      errorBox: byId("interval-error"),
      doneBox: byId("interval-done"),
      // Whole minutes, or the API's own message for what is out of bounds.
      call: () => api(folderUrl, { method: "PATCH", body: { sync_interval_seconds: Math.round(minutes * 60) } }),
      done: (saved) => {
        const minutes = Math.round(saved.sync_interval_seconds / 60);
        return interpolate(ngettext("Saved: checked every minute.", "Saved: checked every %(count)s minutes.", minutes), { count: minutes });
      },
    });
  });
}

function setUpExcludes() {
  const form = byId("exclude-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const folder = await submit({
      form,
      button: form.querySelector("button"),
      errorBox: byId("exclude-error"),
      doneBox: byId("exclude-done"),
      call: () => api(folderUrl, { method: "PATCH", body: { exclude_patterns: form.elements.exclude_patterns.value } }),
      done: () => gettext("Saved. A sync applies them now."),
    });
    if (folder) form.elements.exclude_patterns.value = folder.exclude_patterns;
  });
}

function setUpLanguage() {
  const form = byId("language-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const language = form.elements.language.value;
    if (!language) return;
    const folder = await submit({
      form,
      button: form.querySelector("button"),
      errorBox: byId("language-error"),
      doneBox: byId("language-done"),
      call: () => api(folderUrl, { method: "PATCH", body: { language } }),
      done: () => gettext("Saved. Keywords are being re-indexed in this language."),
    });
    if (folder) form.elements.language.value = folder.language;
  });
}

function setUpWork() {
  const work = (button, path, done) =>
    button.addEventListener("click", async () => {
      const folder = await submit({
        button,
        errorBox: byId("work-error"),
        doneBox: byId("work-done"),
        call: () => api(`${folderUrl}/${path}`, { method: "POST" }),
        done,
      });
      if (folder) showFolder(folder);
    });
  work(byId("sync-now"), "sync", () => gettext("Sync queued: changes show on the folders page as they come."));
  work(byId("reindex"), "reindex", () => gettext("Re-indexing every file; the folder answers from the old index meanwhile."));
}

async function setUpDrive() {
  const state = byId("drive-state");
  if (!state) return;
  const button = byId("drive-disconnect");
  const show = (status) => {
    state.textContent = status.connected
      ? status.access === "oauth"
        ? gettext("Connected with your Google account.")
        : gettext("Reached through the server's own access; there is no account of yours to disconnect.")
      : gettext("Not connected: Drive folders do not sync until you connect Google Drive again on the folders page.");
    button.hidden = status.access !== "oauth";
  };
  try {
    show(await api("/api/drive/status"));
  } catch (error) {
    state.textContent = interpolate(gettext("Could not check Google Drive: %(reason)s"), { reason: error.message });
  }
  button.addEventListener("click", async () => {
    if (!window.confirm(gettext("Disconnect Google Drive? Every Drive folder stops syncing until you connect again."))) return;
    const done = await submit({
      button,
      errorBox: byId("drive-error"),
      call: () => api("/api/drive/disconnect", { method: "POST" }).then(() => true),
    });
    if (done) show({ connected: false, access: "" });
  });
}

function setUpRemove() {
  const open = byId("remove-open");
  if (!open) return;
  const dialog = byId("remove-dialog");
  open.addEventListener("click", () => {
    byId("remove-error").textContent = "";
    dialog.showModal();
  });
  byId("remove-confirm").addEventListener("click", async () => {
    const removed = await submit({
      button: byId("remove-confirm"),
      errorBox: byId("remove-error"),
      call: () => api(folderUrl, { method: "DELETE" }).then(() => true),
    });
    if (removed) window.location.assign("/");
  });
}

// The folder's state now, and the event id it reflects (the stream follows from there).
async function refresh() {
  try {
    const folder = await api(folderUrl);
    showFolder(folder);
    return folder.events_after;
  } catch {
    return "0"; // the server-rendered state stays; the next action reports any problem
  }
}

// The folder's events (indexing, files, syncs) keep the status and the last sync current; a burst
// of them is read back as one refresh.
let refreshTimer = null;
function refreshSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    refresh();
  }, 300);
}

function followChanges(after) {
  const on = Object.fromEntries(["indexing", "scan", "file", "sync", "folder_error"].map((type) => [type, refreshSoon]));
  const stream = followFolder(folderId, on, { poll: refresh, after });
  closeOnLeave(() => [stream]);
}

setUpRename();
setUpInterval();
setUpExcludes();
setUpLanguage();
setUpWork();
setUpDrive();
setUpRemove();
followChanges(await refresh());
