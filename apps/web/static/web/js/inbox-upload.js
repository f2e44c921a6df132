// Upload into the inbox: a file picker beside the message box, and files dropped anywhere on the
// page, each sent to POST /api/inbox/files for the folder chosen in the composer. The file is
// indexed at once; its suggestion card then arrives live through the folder's event stream, like
// any new inbox file. Each file's outcome (saved where, or why not) is announced in a status line.
import { h, statusSetter } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const folderSelect = document.getElementById("inbox-folder");

const input = h("input", { type: "file", id: "inbox-upload-input", class: "visually-hidden", multiple: "" });
const statusLine = h("p", { id: "inbox-upload-status", class: "run-status", role: "status", "aria-live": "polite" });
const setStatus = statusSetter(statusLine);
const area = h(
  "div",
  { class: "composer-row inbox-upload", role: "group", "aria-label": gettext("Upload to the inbox") },
  h("label", { for: "inbox-upload-input", class: "button" }, gettext("Upload files…")),
  input,
  h("span", { class: "help" }, gettext("or drop files on this page; they go into the folder's inbox/.")),
);
// Under the composer's folder choice: uploads go to that folder (hidden with it when there is none).
folderSelect.closest(".composer-row").after(area, statusLine);

function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]').content;
}

function failure(status, data) {
  const fields = Object.values(data?.errors ?? {}).flat();
  const detail = data?.detail && data.detail !== gettext("Invalid input.") ? [data.detail] : [];
  return [...detail, ...fields].join(" ") || interpolate(gettext("The server answered %(status)s."), { status });
}

async function uploadOne(file) {
  const form = new FormData();
  form.append("file", file, file.name);
  // The folder in the URL: the server checks it before reading the file.
  const response = await fetch(`/api/inbox/files?folder_id=${encodeURIComponent(folderSelect.value)}`, {
    method: "POST",
    headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
    credentials: "same-origin",
    body: form,
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    throw new Error(interpolate(gettext("%(name)s was not uploaded: %(reason)s"), { name: file.name, reason: failure(response.status, data) }));
  }
  return data;
}

async function upload(files) {
  if (!files.length) return;
  if (!folderSelect.value) {
    setStatus(gettext("Connect a folder first: uploads go into a folder's inbox/."), { failed: true });
    return;
  }
  const outcomes = [];
  let saved = 0;
  let failed = false;
  for (const file of files) {
    setStatus(interpolate(gettext("Uploading %(name)s…"), { name: file.name }), { working: true });
    try {
      const result = await uploadOne(file);
      saved += 1;
      outcomes.push(
        result.renamed
          ? interpolate(gettext("Saved %(name)s as %(path)s (the name was taken)."), { name: file.name, path: result.path })
          : interpolate(gettext("Saved %(path)s."), { path: result.path }),
      );
    } catch (error) {
      failed = true;
      outcomes.push(error.message);
    }
  }
  if (saved) outcomes.push(ngettext("Its suggestion follows once it is indexed.", "Their suggestions follow once they are indexed.", saved));
  setStatus(outcomes.join(" "), { failed });
}

input.addEventListener("change", () => {
  upload([...input.files]).finally(() => {
    input.value = "";
  });
});

// Dropping anywhere on the page uploads; without preventDefault the browser would open the file.
function carriesFiles(event) {
  return [...(event.dataTransfer?.types ?? [])].includes("Files");
}
document.addEventListener("dragover", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  event.dataTransfer.dropEffect = "copy";
  area.classList.add("dropping");
});
document.addEventListener("dragleave", (event) => {
  if (!event.relatedTarget) area.classList.remove("dropping");
});
document.addEventListener("drop", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  area.classList.remove("dropping");
  upload([...event.dataTransfer.files]);
});
