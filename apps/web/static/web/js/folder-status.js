// The folder page's live indexing state: a progress bar, and the files that failed or were
// skipped with their reasons, each with a Retry (and "Retry all failed"), all updated from the
// folder's event stream.
import { api, results } from "./api.js";
import { clone, field } from "./dom.js";
import { closeOnLeave, followFolder } from "./folder-stream.js";
import { progressText, statusLabel } from "./format.js";
import { formatNumber, gettext, interpolate, ngettext } from "./i18n.js";

const root = document.getElementById("folder-live");
const folderId = Number(root.dataset.folderId);
const progress = document.getElementById("folder-progress");
const counts = document.getElementById("folder-counts");
const state = document.getElementById("folder-state");
const panel = document.getElementById("problem-files");
const list = document.getElementById("problem-list");
const count = document.getElementById("problem-count");
const problemStatus = document.getElementById("problem-status");
const retryAll = document.getElementById("retry-all");
const rows = new Map(); // file id -> row
let retrying = false; // the status line says a retry is under way, until a file is indexed

function sayProblem(text, { retry = false } = {}) {
  problemStatus.textContent = text;
  retrying = retry;
}

function showFolder(folder) {
  const done = folder.files_done ?? folder.files_indexed;
  progress.max = Math.max(folder.files_total, 1);
  progress.value = folder.files_total ? done : 0;
  counts.textContent = progressText(folder);
  showState(folder.status);
}

function showState(status) {
  state.textContent = statusLabel(status);
  state.dataset.status = status;
}

function showFile(file) {
  if (file.status !== "failed" && file.status !== "skipped") {
    rows.get(file.id)?.remove();
    rows.delete(file.id);
    return updatePanel();
  }
  let row = rows.get(file.id);
  if (!row) {
    row = clone("problem-item");
    row.querySelector('[data-action="retry"]').addEventListener("click", () => retry(file.id));
    rows.set(file.id, row);
    list.append(row);
  }
  row.dataset.status = file.status;
  field(row, "path").textContent = file.path;
  const badge = field(row, "status");
  badge.textContent = file.status === "failed" ? gettext("Failed") : gettext("Skipped");
  badge.dataset.status = file.status === "failed" ? "error" : "pending";
  field(row, "reason").textContent = file.error || gettext("No reason was recorded.");
  const button = row.querySelector('[data-action="retry"]');
  button.disabled = false;
  button.textContent = gettext("Retry");
  button.setAttribute("aria-label", interpolate(gettext("Retry %(path)s"), { path: file.path }));
  updatePanel();
}

function updatePanel() {
  const failed = [...rows.values()].filter((row) => row.dataset.status === "failed").length;
  panel.hidden = rows.size === 0;
  count.textContent = `(${formatNumber(rows.size)})`;
  retryAll.disabled = failed === 0;
}

async function retry(fileId) {
  const button = rows.get(fileId)?.querySelector('[data-action="retry"]');
  if (button) {
    button.disabled = true;
    button.textContent = gettext("Retrying…");
  }
  try {
    const file = await api(`/api/files/${fileId}/retry`, { method: "POST" });
    sayProblem(interpolate(gettext("Retrying %(path)s…"), { path: file.path }), { retry: true });
    rows.get(fileId).dataset.status = "pending";
  } catch (error) {
    sayProblem(error.message);
    if (button) {
      button.disabled = false;
      button.textContent = gettext("Retry");
    }
  }
  updatePanel();
}

retryAll.addEventListener("click", async () => {
  retryAll.disabled = true;
  try {
    const answer = await api(`/api/folders/${folderId}/files/retry`, { method: "POST", body: {} });
    const retried = answer.retried.length;
    const text = ngettext("Retrying %(count)s failed file…", "Retrying %(count)s failed files…", retried);
    sayProblem(interpolate(text, { count: retried }), { retry: true });
    for (const id of answer.retried) {
      const row = rows.get(id);
      if (!row) continue;
      row.dataset.status = "pending";
      const button = row.querySelector('[data-action="retry"]');
      button.disabled = true;
      button.textContent = gettext("Retrying…");
    }
    showFolder(answer.folder);
  } catch (error) {
    sayProblem(error.message);
  }
  updatePanel();
});

// The folder's state now, and the event id it reflects (the stream follows from there).
async function load() {
  try {
    const [folder, failed, skipped] = await Promise.all([
      api(`/api/folders/${folderId}`),
      api(`/api/folders/${folderId}/files?status=failed&limit=200`),
      api(`/api/folders/${folderId}/files?status=skipped&limit=200`),
    ]);
    showFolder(folder);
    for (const file of [...results(failed), ...results(skipped)]) showFile(file);
    return folder.events_after;
  } catch (error) {
    sayProblem(interpolate(gettext("Could not load the folder's files: %(reason)s"), { reason: error.message }));
    return "0";
  }
}

// An event with counts carries all of them and the folder's status (FolderCounts.as_event).
const counted = (data) => {
  if (data.files_total !== undefined) showFolder({ ...data, status: data.folder_status });
};

const after = await load();
const stream = followFolder(
  folderId,
  {
    indexing: (data) => {
      showState("indexing");
      counted(data);
    },
    scan: counted,
    file: (data) => {
      counted(data);
      showFile({ id: data.file_id, path: data.path, status: data.status, error: data.error });
      if (data.status === "indexed" && retrying) {
        sayProblem(interpolate(gettext("%(path)s is indexed now."), { path: data.path }));
      }
    },
    folder_error: (data) => {
      showState(data.folder_status);
      sayProblem(data.error);
    },
    // The server ends the stream with an error when the reader lost access (or the bus failed):
    // asked again, a 404 says which, and the page stops presenting a folder that is not theirs.
    error: async () => {
      try {
        await api(`/api/folders/${folderId}`);
      } catch (error) {
        if (error.status !== 404) return;
        stream.close();
        state.textContent = gettext("No access");
        state.dataset.status = "error";
        document.dispatchEvent(new CustomEvent("folder-access-lost"));
      }
    },
  },
  { poll: load, after },
);
closeOnLeave(() => [stream]);
