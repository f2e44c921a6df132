// What an answer says about itself: the model was unavailable (the offline answerer's passages),
// the passages an uncited answer was written from, and a cut-short answer's Continue button.
import { citationLabel } from "./answer.js";
import { h } from "./dom.js";
import { citationHref } from "./citations.js";
import { gettext } from "./i18n.js";

export const CUT_SHORT = gettext("The answer was cut off at its length limit.");

// `onContinue(button)` starts the continuation; without it (no chat page) the button is left out.
export function renderNotes(item, message, onContinue) {
  const bubble = item.querySelector(".bubble");
  for (const old of bubble.querySelectorAll(".answer-note")) old.remove();
  const metadata = message.metadata ?? {};
  if (metadata.notice) {
    const notice = h("p", { class: "answer-note message-notice", role: "note" }, metadata.notice);
    bubble.querySelector(".answer").before(notice);
  }
  const consulted = message.sources_consulted ?? message.content?.sources_consulted ?? [];
  if (consulted.length) {
    bubble.querySelector(".message-meta").before(
      h(
        "div",
        { class: "answer-note sources" },
        h("span", { class: "sources-label" }, gettext("Sources consulted")),
        h("ul", {}, ...consulted.map((citation) => h("li", {}, sourceLink(citation)))),
      ),
    );
  }
  if (metadata.truncated) {
    const button = h("button", { type: "button", class: "button" }, gettext("Continue"));
    button.addEventListener("click", () => onContinue(button));
    bubble.querySelector(".message-meta").before(
      h("p", { class: "answer-note message-truncated" }, `${CUT_SHORT} `, onContinue ? button : null),
    );
  }
}

// Each opens the passage in its document, as a citation does (a removed one, the page saying so).
function sourceLink(citation) {
  const removed = Boolean(citation.source_removed);
  return h(
    "a",
    { class: removed ? "source-chip source-removed" : "source-chip", href: citationHref(citation) },
    citationLabel(citation),
    removed ? h("em", {}, ` · ${gettext("source removed")}`) : null,
  );
}
