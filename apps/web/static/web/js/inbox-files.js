// Inbox files waiting without a suggestion (under the threshold, automatic suggestions off, kept in
// the inbox): each with why, and "Suggest a folder" to ask for one now.
import { api } from "./api.js";
import { h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

// `file`: { id|file_id, folder_id, path, name?, reason }. `onSuggested(suggestion)` shows the card.
export function unsuggestedCard(file, { onSuggested }) {
  const name = file.name ?? file.path.split("/").at(-1);
  const outcome = h("p", { class: "suggestion-outcome", role: "status", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "button" }, gettext("Suggest a folder"));
  const item = h(
    "li",
    { class: "feed-item", dataset: { unsuggested: String(file.id ?? file.file_id) } },
    h(
      "article",
      { class: "card", "aria-label": interpolate(gettext("Waiting in the inbox: %(name)s"), { name }) },
      h("h2", { class: "file-name" }, name),
      h("p", { class: "muted" }, h("code", {}, file.path)),
      h("p", { class: "muted" }, interpolate(gettext("No suggestion: %(reason)s"), { reason: file.reason })),
      h("div", { class: "suggestion-actions" }, button),
      outcome,
    ),
  );
  button.addEventListener("click", async () => {
    button.disabled = true;
    outcome.textContent = gettext("Looking for a folder…");
    try {
      const answer = await api("/api/inbox/organize", {
        method: "POST",
        body: { folder_id: file.folder_id, paths: [file.path] },
      });
      const suggestion = answer.suggestions?.[0];
      if (suggestion) {
        item.remove();
        onSuggested(suggestion);
        return;
      }
      outcome.textContent = answer.skipped?.[0]?.reason ?? gettext("No folder fits it yet.");
    } catch (error) {
      outcome.textContent = error.message;
    }
    button.disabled = false;
  });
  return item;
}
