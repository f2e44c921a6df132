// The side panel showing a cited passage: which file, where in it, and the text itself.
import { api } from "./api.js";
import { field } from "./dom.js";
import { dateTime } from "./format.js";

const dialog = document.getElementById("passage");
let opened = 0; // file details arriving for an earlier citation must not overwrite a later one

dialog.querySelector('[data-action="close"]').addEventListener("click", () => dialog.close());
dialog.addEventListener("click", (event) => {
  if (event.target === dialog) dialog.close(); // a click on the backdrop
});

export async function openPassage(citation) {
  const current = ++opened;
  field(dialog, "n").textContent = `[${citation.n}]`;
  field(dialog, "file-name").textContent = citation.file_name;
  field(dialog, "path").textContent = citation.path;
  field(dialog, "location").textContent = citation.location || "Whole file";
  field(dialog, "text").textContent = citation.text ?? citation.snippet ?? "";
  field(dialog, "modified-row").hidden = true;
  field(dialog, "digest-row").hidden = true;
  if (!dialog.open) dialog.showModal();
  let file;
  try {
    file = await api(`/api/files/${citation.file_id}`);
  } catch {
    return; // the file may have been removed since the answer; the passage itself still shows
  }
  if (current !== opened) return;
  field(dialog, "modified").textContent = dateTime(file.modified_time);
  field(dialog, "modified-row").hidden = !file.modified_time;
  field(dialog, "digest").textContent = file.digest;
  field(dialog, "digest-row").hidden = !file.digest;
}
