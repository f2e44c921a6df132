// Wording of a file's facts on the files and search pages: size, type, where in it.

// "1.4 MB": sizes for people.
export function fileSize(bytes) {
  if (bytes === null || bytes === undefined) return "";
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

// "PDF", "MD": a file's type as its extension says, else its MIME type.
export function fileType(file) {
  const name = file.name ?? file.file_name ?? "";
  const dot = name.lastIndexOf(".");
  if (dot > 0 && dot < name.length - 1) return name.slice(dot + 1).toUpperCase();
  return file.mime_type || "—";
}

// "page 3 · Ingredients": a passage's place in its file, from the chunk's location.
export function locationText(location = {}) {
  const parts = [];
  if (location.page) parts.push(`page ${location.page}`);
  if (location.sheet) parts.push(location.range ? `${location.sheet}!${location.range}` : location.sheet);
  if (location.slide) parts.push(`slide ${location.slide}`);
  if (location.chapter) parts.push(location.chapter);
  if (location.heading) parts.push(location.heading);
  if (location.attachment) parts.push(`attachment ${location.attachment}`);
  if (Number.isInteger(location.time)) parts.push(`at ${clockTime(location.time)}`);
  if (location.ocr) parts.push("text read by OCR");
  return parts.join(" · ");
}

// "0:42", "1:02:03": seconds into a recording, as a player shows them.
export function clockTime(seconds) {
  const pad = (value) => String(value).padStart(2, "0");
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return hours ? `${hours}:${pad(minutes)}:${pad(seconds % 60)}` : `${minutes}:${pad(seconds % 60)}`;
}
