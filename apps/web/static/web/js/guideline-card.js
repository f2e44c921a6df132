// "Shall I remember that?": a guideline line the assistant proposes after consistent decisions,
// with Remember (append it to the folder's guideline.md) and No.
import { api } from "./api.js";
import { h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const ANSWERED = { remembered: gettext("Remembered: it is in guideline.md now."), declined: gettext("Not remembered.") };

// `proposal`: { message_id, line, target, status? } (a stream event, or a message's metadata).
export function guidelineCard(proposal, { text } = {}) {
  const outcome = h("p", { class: "suggestion-outcome", role: "status", "aria-live": "polite" });
  const remember = h("button", { type: "button", class: "button primary" }, gettext("Remember"));
  const decline = h("button", { type: "button", class: "button" }, gettext("No"));
  const actions = h("div", { class: "suggestion-actions" }, remember, decline);
  const card = h(
    "article",
    { class: "card", "aria-label": gettext("Guideline line proposed") },
    h(
      "p",
      {},
      text ??
        interpolate(gettext("Shall I remember that? Add this line to guideline.md (files like these go in %(target)s):"), {
          target: proposal.target,
        }),
    ),
    h("pre", { class: "guideline-line" }, h("code", {}, proposal.line)),
    actions,
    outcome,
  );
  const answer = async (action) => {
    for (const button of [remember, decline]) button.disabled = true;
    try {
      const { message } = await api(`/api/inbox/guideline-proposals/${proposal.message_id}/respond`, {
        method: "POST",
        body: { action },
      });
      actions.hidden = true;
      card.classList.add("decided");
      outcome.textContent = message.content?.details ?? ANSWERED[action === "remember" ? "remembered" : "declined"];
    } catch (error) {
      outcome.textContent = error.message;
      for (const button of [remember, decline]) button.disabled = false;
    }
    outcome.tabIndex = -1;
    outcome.focus();
  };
  remember.addEventListener("click", () => answer("remember"));
  decline.addEventListener("click", () => answer("decline"));
  if (proposal.status) {
    actions.hidden = true;
    outcome.textContent = ANSWERED[proposal.status] ?? "";
  }
  return h("li", { class: "feed-item", dataset: { proposal: String(proposal.message_id) } }, card);
}
