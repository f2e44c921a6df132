// What a tool found, inside its expanded step: a result's structured output (`tool_output_data`).
// Documents (search_folder, rerank_documents) are listed with their scores and passages, each
// passage under the number the answer cites it by; any other output shows as JSON.
import { h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

export function showDetail(step, detail) {
  const body = step.querySelector(".step-body");
  body.querySelector(".step-detail")?.remove();
  if (detail === undefined || detail === null) return;
  const documents = Array.isArray(detail.documents) ? detail.documents : null;
  const shown = documents?.length
    ? h("ol", {}, ...documents.map(documentItem))
    : h("pre", {}, JSON.stringify(detail, null, 2));
  body.append(h("div", { class: "step-detail" }, h("p", { class: "step-label" }, documents ? gettext("Documents found") : gettext("Details")), shown));
}

function documentItem(doc) {
  if (typeof doc !== "object" || doc === null) return h("li", {}, String(doc));
  const chunks = Array.isArray(doc.chunks) ? doc.chunks : [];
  const name = doc.path ?? doc.file_name ?? `#${doc.file_id ?? doc.doc_id}`;
  const cited = Array.isArray(doc.passages) ? doc.passages.map((n) => `[${n}]`).join(" ") : null;
  return h(
    "li",
    {},
    name,
    typeof doc.score === "number" ? h("span", { class: "step-score" }, interpolate(gettext("score %(score)s"), { score: doc.score })) : null,
    cited ? h("span", { class: "step-score" }, cited) : null,
    chunks.length ? h("ul", {}, ...chunks.map(passageItem)) : null,
  );
}

function passageItem(chunk) {
  if (typeof chunk !== "object" || chunk === null) return h("li", {}, String(chunk));
  const label = [chunk.n ? `[${chunk.n}]` : null, chunk.location || null].filter(Boolean).join(" ");
  return h("li", {}, label ? h("strong", {}, `${label} `) : null, chunk.snippet ?? chunk.text ?? "");
}
