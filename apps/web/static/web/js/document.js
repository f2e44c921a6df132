// The document page: the file's extracted text, a page of chunks at a time, opened at the cited one.
import { api, results } from "./api.js";
import { clone, field, h } from "./dom.js";

const root = document.getElementById("document");
const fileId = root.dataset.fileId;
const citedId = Number(root.dataset.chunkId) || null;
const list = document.getElementById("chunks");
const earlier = document.getElementById("earlier");
const later = document.getElementById("later");
const status = document.getElementById("text-status");
let first = Number(root.dataset.page) || 1;
let last = first;

async function load(page) {
  status.textContent = "Loading the text…";
  try {
    const data = await api(`/api/files/${fileId}/chunks?page=${page}`);
    status.textContent = data.count ? "" : "This file has no extracted text.";
    return data;
  } catch (error) {
    status.textContent = error.message;
    return null;
  }
}

function chunkItem(chunk) {
  const item = clone("chunk-item");
  item.id = `chunk-${chunk.id}`;
  field(item, "location").textContent = chunk.location_label || `Part ${chunk.chunk_index + 1}`;
  const text = field(item, "text");
  if (chunk.id === citedId) {
    item.classList.add("cited");
    item.tabIndex = -1;
    item.setAttribute("aria-label", `Cited passage, ${chunk.location_label || "in this file"}`);
    text.append(h("mark", {}, chunk.text));
    const where = document.getElementById("cited-location");
    if (where) where.textContent = chunk.location_label;
  } else {
    text.textContent = chunk.text;
  }
  return item;
}

async function showPage(page, { before = false } = {}) {
  const data = await load(page);
  if (!data) return;
  const items = results(data).map(chunkItem);
  if (before) list.prepend(...items);
  else list.append(...items);
  earlier.hidden = first <= 1;
  later.hidden = !data.next;
}

earlier.addEventListener("click", async () => {
  first -= 1;
  await showPage(first, { before: true });
});
later.addEventListener("click", async () => {
  last += 1;
  await showPage(last);
});

await showPage(first);
const cited = citedId && document.getElementById(`chunk-${citedId}`);
if (cited) {
  cited.scrollIntoView({ block: "center" });
  cited.focus({ preventScroll: true });
}
