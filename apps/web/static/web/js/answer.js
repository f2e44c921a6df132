// An answer's text as DOM: paragraphs, bullet lists, **bold**, `code`, and [n] citations as links.
import { citationHref } from "./citations.js";
import { h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const INLINE = /(\*\*[^*\n]+\*\*|`[^`\n]+`|\[\d+(?:\s*,\s*\d+)*\])/;
const LIST_ITEM = /^\s*(?:[-*•]|\d+[.)])\s+/;

export function renderAnswer(container, text, { citations = [] } = {}) {
  const byNumber = new Map(citations.map((citation) => [Number(citation.n), citation]));
  const inline = (line) => inlineNodes(line, byNumber);
  const blocks = text
    .split(/\n\s*\n/)
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split("\n").filter((line) => line.trim());
      if (lines.every((line) => LIST_ITEM.test(line))) {
        return h("ul", {}, ...lines.map((line) => h("li", {}, ...inline(line.replace(LIST_ITEM, "")))));
      }
      return h("p", {}, ...lines.flatMap((line, index) => [index ? h("br") : null, ...inline(line)]));
    });
  container.replaceChildren(...blocks);
}

export function citationLabel(citation) {
  return [citation.file_name, citation.location].filter(Boolean).join(" · ");
}

function inlineNodes(line, byNumber) {
  return line
    .split(INLINE)
    .filter(Boolean)
    .flatMap((part) => {
      if (part.startsWith("**") && part.endsWith("**")) return [h("strong", {}, part.slice(2, -2))];
      if (part.length > 2 && part.startsWith("`") && part.endsWith("`")) return [h("code", {}, part.slice(1, -1))];
      if (!part.startsWith("[") || !INLINE.test(part)) return [part];
      const numbers = part.slice(1, -1).split(",").map((n) => Number(n.trim()));
      return numbers.map((n) => citationLink(n, byNumber.get(n)));
    });
}

function citationLink(n, citation) {
  // While the answer streams the citations are not known yet: [n] stays plain text until then.
  if (!citation) return `[${n}]`;
  // A removed source still links: its page says the file is gone.
  const removed = Boolean(citation.source_removed);
  const template = removed ? gettext("Source %(n)s (removed): %(label)s") : gettext("Source %(n)s: %(label)s");
  const label = interpolate(template, { n, label: citationLabel(citation) });
  return h(
    "a",
    { class: removed ? "cite cite-removed" : "cite", href: citationHref(citation), "aria-label": label },
    `[${n}]`,
  );
}
