// The query's words marked in a passage, as DOM nodes: text nodes and <mark> elements built with
// textContent, never HTML, so a passage holding markup shows it as text.

const STOPWORDS = new Set(
  "a an and are as at be by did do does for from how i in is it its my of on or the this that to was were what when where which who why with".split(
    " ",
  ),
);
const WORD = /[\p{L}\p{N}]+/gu;

// Search stems its keywords ("renews" finds "renewal"): mark words that start with the stem.
function stem(word) {
  if (word.length > 4) {
    for (const suffix of ["ing", "ed", "es", "s"]) {
      if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length);
    }
  }
  return word;
}

export function queryPattern(query) {
  const stems = new Set();
  for (const [word] of query.toLowerCase().matchAll(WORD)) {
    if (word.length > 1 && !STOPWORDS.has(word)) stems.add(stem(word));
  }
  if (!stems.size) return null;
  // Longest first, so "tax" does not take the start of "taxes" from "taxes" itself.
  const alternatives = [...stems].sort((a, b) => b.length - a.length).map((s) => s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&"));
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join("|")})[\\p{L}\\p{N}]*`, "giu");
}

export function highlighted(text, pattern) {
  if (!pattern) return [document.createTextNode(text)];
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) nodes.push(document.createTextNode(text.slice(last, match.index)));
    const mark = document.createElement("mark");
    mark.textContent = match[0];
    nodes.push(mark);
    last = match.index + match[0].length;
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}
