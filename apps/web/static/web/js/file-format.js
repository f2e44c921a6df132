// Wording of a file's facts on the files and search pages: size, type, where in it.
import { formatNumber, gettext, interpolate, pgettext } from "./i18n.js";

// "1.4 MB": sizes for people.
export function fileSize(bytes) {
  if (bytes === null || bytes === undefined) return "";
  if (bytes < 1024) return `${formatNumber(bytes)} ${pgettext("file size", "B")}`;
  const units = [
    pgettext("file size", "KB"),
    pgettext("file size", "MB"),
    pgettext("file size", "GB"),
    pgettext("file size", "TB"),
  ];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = value < 10 ? 1 : 0;
  return `${formatNumber(value, { minimumFractionDigits: digits, maximumFractionDigits: digits })} ${units[unit]}`;
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
  if (location.page) parts.push(interpolate(gettext("page %(n)s"), { n: location.page }));
  if (location.sheet) parts.push(location.range ? `${location.sheet}!${location.range}` : location.sheet);
  if (location.slide) parts.push(interpolate(gettext("slide %(n)s"), { n: location.slide }));
  if (location.chapter) parts.push(location.chapter);
  if (location.heading) parts.push(location.heading);
  if (location.attachment) parts.push(interpolate(gettext("attachment %(name)s"), { name: String(location.attachment) }));
  if (Number.isInteger(location.time)) parts.push(interpolate(gettext("at %(time)s"), { time: clockTime(location.time) }));
  if (location.ocr) parts.push(gettext("text read by OCR"));
  return parts.join(" · ");
}

// "0:42", "1:02:03": seconds into a recording, as a player shows them.
export function clockTime(seconds) {
  const pad = (value) => String(value).padStart(2, "0");
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return hours ? `${hours}:${pad(minutes)}:${pad(seconds % 60)}` : `${minutes}:${pad(seconds % 60)}`;
}
