// One message in the chat: a question, or an answer that may still be streaming its steps and text.
import { citationLabel, renderAnswer } from "./answer.js";
import { renderNotes } from "./answer-notes.js";
import { clone, field, h } from "./dom.js";
import { duration } from "./format.js";
import { openPassage } from "./passage.js";
import { StepList } from "./steps.js";

export function questionItem(text) {
  const item = clone("message-item");
  item.classList.add("message-user");
  field(item, "role").textContent = "You";
  field(item, "text").textContent = text;
  return item;
}

export class AnswerView {
  // Set by the chat page: continues a cut-short answer (`metadata.truncated`) in this view.
  static continueAnswer = null;

  constructor() {
    this.item = clone("message-item");
    this.item.classList.add("message-agent");
    field(this.item, "role").textContent = "Assistant";
    this.steps = new StepList(field(this.item, "steps"));
    this.text = "";
  }

  static finished(message) {
    const view = new AnswerView();
    view.finish(message);
    return view;
  }

  streaming(on) {
    this.item.classList.toggle("streaming", on);
    this.item.setAttribute("aria-busy", String(on));
  }

  delta(text) {
    this.text += text;
    renderAnswer(field(this.item, "text"), this.text);
  }

  // The streamed text belonged to a turn that went on to call tools: it was not the answer.
  reset() {
    this.text = "";
    renderAnswer(field(this.item, "text"), "");
  }

  finish(message) {
    this.streaming(false);
    this.text = message.text;
    const citations = message.citations ?? [];
    renderAnswer(field(this.item, "text"), message.text, { citations, onCite: openPassage });
    const sources = field(this.item, "sources");
    sources.hidden = !citations.length;
    field(this.item, "source-list").replaceChildren(
      ...citations.map((citation) =>
        h(
          "li",
          {},
          h(
            "button",
            { type: "button", class: "source-chip", onclick: () => openPassage(citation) },
            h("span", { class: "source-n" }, String(citation.n)),
            citationLabel(citation),
          ),
        ),
      ),
    );
    field(this.item, "meta").textContent = describe(message.metadata ?? {}, this.item);
    const { continueAnswer } = AnswerView;
    renderNotes(this.item, message, continueAnswer && ((button) => continueAnswer(message, this, button)));
  }

  fail(text) {
    this.streaming(false);
    this.item.classList.add("message-error");
    field(this.item, "meta").textContent = text;
  }
}

function describe(metadata, item) {
  const steps = item.querySelectorAll(".step").length;
  const parts = [metadata.mode === "agent" ? "Agent mode" : "Standard"];
  if (steps) parts.push(`${steps} step${steps === 1 ? "" : "s"}`);
  if (metadata.timings_ms?.total_ms) parts.push(duration(metadata.timings_ms.total_ms));
  // An agent's reason says why it answered as standard mode does; standard mode's, why offline.
  const reason = metadata.fallback_reason;
  if (reason) parts.push(metadata.mode === "agent" ? `answered in standard mode (${reason})` : reason);
  return parts.join(" · ");
}
