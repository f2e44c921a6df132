// The document page: the file's extracted text, a page of chunks at a time, opened at the cited one.
// Consecutive chunks overlap (a chunk is the document's text from char_start to char_end): each shows
// only what the one before did not, so the text reads once, in order; the cited chunk shows whole.
import { api, results } from "./api.js";
import { playButton } from "./document-audio.js";
import { clone, field, h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

// A reload opens at the cited passage again, not where the browser last was.
if ("scrollRestoration" in history) history.scrollRestoration = "manual";

const root = document.getElementById("document");
const fileId = root.dataset.fileId;
const citedId = Number(root.dataset.chunkId) || null;
const list = document.getElementById("chunks");
const earlier = document.getElementById("earlier");
const later = document.getElementById("later");
const status = document.getElementById("text-status");
const byIndex = new Map(); // chunk_index -> {chunk, item}
let first = Number(root.dataset.page) || 1;
let last = first;

async function load(page) {
  status.textContent = gettext("Loading the text…");
  try {
    const data = await api(`/api/files/${fileId}/chunks?page=${page}`);
    status.textContent = data.count ? "" : gettext("This file has no extracted text.");
    return data;
  } catch (error) {
    status.textContent = error.message;
    return null;
  }
}

function span(chunk) {
  const { char_start: start, char_end: end } = chunk.location ?? {};
  // Only a chunk whose text is exactly its span can be trimmed by offsets.
  return Number.isInteger(start) && end - start === chunk.text.length ? { start, end } : null;
}

// The part of a chunk to show: from where the previous chunk ended, up to where a cited next one starts.
function shownText(chunk) {
  const own = span(chunk);
  if (chunk.id === citedId || !own) return chunk.text;
  const before = byIndex.get(chunk.chunk_index - 1)?.chunk;
  const after = byIndex.get(chunk.chunk_index + 1)?.chunk;
  const from = before && span(before) ? Math.min(Math.max(own.start, span(before).end), own.end) : own.start;
  const to = after?.id === citedId && span(after) ? Math.max(from, Math.min(own.end, span(after).start)) : own.end;
  return chunk.text.slice(from - own.start, to - own.start);
}

function fillText(entry) {
  const text = field(entry.item, "text");
  if (entry.chunk.id === citedId) text.replaceChildren(h("mark", {}, entry.chunk.text));
  else text.textContent = shownText(entry.chunk);
}

function chunkItem(chunk) {
  const item = clone("chunk-item");
  item.id = `chunk-${chunk.id}`;
  field(item, "location").textContent = chunk.location_label || interpolate(gettext("Part %(n)s"), { n: chunk.chunk_index + 1 });
  const play = playButton(chunk);
  if (play) field(item, "location").append(" ", play);
  if (chunk.id === citedId) {
    item.classList.add("cited");
    item.tabIndex = -1;
    const where = chunk.location_label || gettext("in this file");
    item.setAttribute("aria-label", interpolate(gettext("Cited passage, %(where)s"), { where }));
    const cited = document.getElementById("cited-location");
    if (cited) cited.textContent = chunk.location_label;
  }
  return item;
}

async function showPage(page, { before = false } = {}) {
  const data = await load(page);
  if (!data) return;
  const chunks = results(data);
  const entries = chunks.map((chunk) => ({ chunk, item: chunkItem(chunk) }));
  for (const entry of entries) byIndex.set(entry.chunk.chunk_index, entry);
  // The neighbours already shown on either side may now have less (or more) to show.
  const touched = new Set(entries);
  if (chunks.length) {
    for (const index of [chunks[0].chunk_index - 1, chunks.at(-1).chunk_index + 1]) {
      if (byIndex.has(index)) touched.add(byIndex.get(index));
    }
  }
  touched.forEach(fillText);
  const items = entries.map((entry) => entry.item);
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
  const bringIntoView = () => cited.scrollIntoView({ block: "center" });
  bringIntoView();
  cited.focus({ preventScroll: true });
  // The PDF view and images above the text may still be loading, and push the passage down.
  if (document.readyState !== "complete") window.addEventListener("load", bringIntoView, { once: true });
}
