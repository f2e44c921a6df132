// Where a citation opens: its file's document page, at the cited chunk when the citation names one.
// The passage's opening (`quote`) finds it again when a re-index replaced the chunk.

const QUOTE_CHARS = 160;

export function citationHref(citation) {
  // An image attached to the question opens whole: it is no file of the folder.
  if (citation.attachment_id) return `/api/attachments/${encodeURIComponent(citation.attachment_id)}`;
  const params = new URLSearchParams();
  if (citation.chunk_id) params.set("chunk", citation.chunk_id);
  const quote = (citation.snippet ?? "").split(/\s+/).join(" ").trim().slice(0, QUOTE_CHARS);
  if (quote) params.set("quote", quote);
  const query = params.toString();
  return `/files/${encodeURIComponent(citation.file_id)}${query ? `?${query}` : ""}`;
}
