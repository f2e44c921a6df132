// Where a citation opens: its file's document page, at the cited chunk when the citation names one.

export function citationHref(citation) {
  const chunk = citation.chunk_id ? `?chunk=${encodeURIComponent(citation.chunk_id)}` : "";
  return `/files/${encodeURIComponent(citation.file_id)}${chunk}`;
}
