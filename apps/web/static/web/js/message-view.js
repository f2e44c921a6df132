// One message in the chat: a question, or an answer that may still be streaming its steps and text.
import { citationLabel, renderAnswer } from "./answer.js";
import { api } from "./api.js";
import { citationHref } from "./citations.js";
import { renderNotes } from "./answer-notes.js";
import { questionImages } from "./chat-images.js";
import { clone, field, h } from "./dom.js";
import { duration } from "./format.js";
import { gettext, interpolate, ngettext } from "./i18n.js";
import { StepList } from "./steps.js";

// `images`: the question's attachments ({name, url}), shown above its text.
export function questionItem(text, images = []) {
  const item = clone("message-item");
  item.classList.add("message-user");
  field(item, "role").textContent = gettext("You");
  field(item, "text").textContent = text;
  if (images.length) field(item, "text").before(questionImages(images));
  return item;
}

export class AnswerView {
  // Set by the chat page: continues a cut-short answer (`metadata.truncated`) in this view.
  static continueAnswer = null;

  constructor() {
    this.item = clone("message-item");
    this.item.classList.add("message-agent");
    field(this.item, "role").textContent = gettext("Assistant");
    this.steps = new StepList(field(this.item, "steps"));
    this.text = "";
    this.message = null;
  }

  // A saved answer (a reloaded conversation) goes through `finish` as a live one's `message`
  // event does: one renderer, so both look the same.
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
    this.message = message;
    this.text = message.text;
    const content = message.content ?? {};
    const citations = message.citations ?? content.citations ?? [];
    // The saved steps replace those built from events: what a reload shows is what was kept.
    const steps = message.steps ?? content.steps ?? [];
    if (steps.length) this.steps.replace(steps);
    renderAnswer(field(this.item, "text"), message.text, { citations });
    const stopped = Boolean(message.metadata?.stopped);
    this.item.classList.toggle("message-stopped", stopped);
    field(this.item, "stopped").hidden = !stopped;
    field(this.item, "stopped").textContent = message.text
      ? gettext("Stopped: the answer was cut short.")
      : gettext("Stopped before any text.");
    const sources = field(this.item, "sources");
    sources.hidden = !citations.length;
    field(this.item, "source-list").replaceChildren(
      ...citations.map((citation) => {
        // Its file or folder is gone: marked so, and the link opens the page that says so.
        const removed = Boolean(citation.source_removed);
        return h(
          "li",
          {},
          h(
            "a",
            { class: removed ? "source-chip source-removed" : "source-chip", href: citationHref(citation) },
            h("span", { class: "source-n" }, String(citation.n)),
            citationLabel(citation),
            removed ? h("em", {}, ` · ${gettext("source removed")}`) : null,
          ),
        );
      }),
    );
    field(this.item, "meta").textContent = describe(message.metadata ?? {}, this.item);
    if (message.id) this.item.dataset.messageId = message.id;
    const { continueAnswer } = AnswerView;
    renderNotes(this.item, message, continueAnswer && ((button) => continueAnswer(message, this, button)));
  }

  fail(text) {
    this.streaming(false);
    this.item.classList.add("message-error");
    field(this.item, "meta").textContent = text;
  }

  // Thumbs up or down, one rating per answer that a second click changes (chat page only).
  enableRating() {
    const actions = field(this.item, "actions");
    if (!this.message?.id || !actions.hidden) return;
    actions.hidden = false;
    const buttons = [...actions.querySelectorAll(".rate")];
    const show = (rating) => {
      for (const button of buttons) button.setAttribute("aria-pressed", String(button.dataset.rating === rating));
    };
    show(this.message.feedback?.rating);
    for (const button of buttons) {
      button.addEventListener("click", async () => {
        const status = field(this.item, "action-status");
        try {
          const feedback = await api(`/api/messages/${this.message.id}/feedback`, {
            method: "POST",
            body: { rating: button.dataset.rating },
          });
          show(feedback.rating);
          status.textContent = gettext("Thanks for the feedback.");
        } catch (error) {
          status.textContent = error.message;
        }
      });
    }
  }

  regenerateButton() {
    return this.item.querySelector('[data-action="regenerate"]');
  }
}

// "Agent mode · 3 steps · waited 18.2 s (12.0 s in the queue, first text after 15.1 s)": the time
// the asker waited, from asking to the saved answer, not only the worker's share of it.
function describe(metadata, item) {
  const steps = item.querySelectorAll(".step").length;
  const parts = [metadata.mode === "agent" ? gettext("Agent mode") : gettext("Standard")];
  if (steps) parts.push(interpolate(ngettext("%(count)s step", "%(count)s steps", steps), { count: steps }));
  const waited = metadata.waited_ms;
  if (waited?.done !== undefined && waited.done !== null) parts.push(waitedText(waited));
  else if (metadata.timings_ms?.total_ms) parts.push(duration(metadata.timings_ms.total_ms));
  // An agent's reason says why it answered as standard mode does; standard mode's, why offline.
  const reason = metadata.fallback_reason;
  if (reason) parts.push(metadata.mode === "agent" ? interpolate(gettext("answered in standard mode (%(reason)s)"), { reason }) : reason);
  return parts.join(" · ");
}

function waitedText({ queued, first_text: firstText, done }) {
  const details = [];
  if (queued !== null && queued !== undefined) details.push(interpolate(gettext("%(time)s in the queue"), { time: duration(queued) }));
  if (firstText !== null && firstText !== undefined) {
    details.push(interpolate(gettext("first text after %(time)s"), { time: duration(firstText) }));
  }
  const waited = interpolate(gettext("waited %(time)s"), { time: duration(done) });
  return details.length ? `${waited} (${details.join(", ")})` : waited;
}
