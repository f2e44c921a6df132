// The inbox's cards beyond suggestions: the files an answer found (name, folder, place in it,
// snippet; open or move each), a clarifying question's answers as buttons, the folder tree for
// "Choose another folder", "Accept all above N%", and cards leaving once their file has moved.
import { api } from "./api.js";
import { citationHref } from "./citations.js";
import { field, h } from "./dom.js";
import { folderTreePicker } from "./folder-tree-picker.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const DEFAULT_BULK_PERCENT = 80;

// A `search_result` message: one card per file. `ask(text)` sends a message to the assistant.
export function resultItem(message, { ask }) {
  const content = message.content ?? {};
  const results = content.results ?? [];
  const total = content.totalFound ?? results.length;
  const listing = content.query === "inbox/";
  const heading = listing
    ? inboxHeading(results.length)
    : interpolate(ngettext("Found %(count)s file for “%(query)s”", "Found %(count)s files for “%(query)s”", total), {
        count: total,
        query: content.query ?? "",
      });
  const item = h(
    "li",
    { class: "feed-item feed-message result-item", dataset: { messageId: message.id ?? "" } },
    h("div", { class: "message-role" }, gettext("Assistant")),
    h("p", { class: "result-heading" }, heading),
    h("ul", { class: "result-cards", "aria-label": heading }, ...results.map((result) => resultCard(result, ask))),
  );
  if (listing) {
    item.dataset.inboxListing = "true";
    countInbox(item);
  }
  return item;
}

function inboxHeading(count) {
  return interpolate(ngettext("%(count)s file in the inbox", "%(count)s files in the inbox", count), { count });
}

// An inbox listing counts the files of its cards still in the inbox: moves and undos change it live.
function countInbox(item) {
  const cards = [...item.querySelectorAll(".result-card")];
  const heading = inboxHeading(cards.filter((card) => card.dataset.path.startsWith("inbox/")).length);
  item.querySelector(".result-heading").textContent = heading;
  item.querySelector(".result-cards").setAttribute("aria-label", heading);
}

function resultCard(result, ask) {
  const name = result.fileName ?? result.path.split("/").at(-1);
  const location = h("code", { "data-field": "location" }, result.location ?? "/");
  const picker = folderTreePicker({
    folderId: result.folderId,
    label: interpolate(gettext("Move %(name)s to"), { name }),
    exclude: [result.location],
    onChoose: (folder) => {
      panel.hidden = true;
      move.setAttribute("aria-expanded", "false");
      ask(`Move ${card.dataset.path} to ${folder}`);
    },
  });
  const panel = h("div", { hidden: "" }, picker.element);
  const move = h("button", { type: "button", class: "button small", "aria-expanded": "false" }, gettext("Move…"));
  move.addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    move.setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) picker.open();
  });
  const card = h(
    "li",
    { class: "card file-card result-card", dataset: { fileId: result.fileId, path: result.path } },
    h(
      "header",
      { class: "file-card-head" },
      h("span", { class: "file-icon", "aria-hidden": "true" }),
      h(
        "div",
        {},
        h("h3", { class: "file-name" }, name),
        h("p", { class: "muted" }, `${result.folderName ?? gettext("Folder")} · ${gettext("in")} `, location),
      ),
    ),
    result.state ? h("p", { class: "result-state" }, result.state) : null,
    result.matchContext ? h("p", { class: "result-snippet" }, result.matchContext) : null,
    h(
      "div",
      { class: "suggestion-actions" },
      h("a", { class: "button small", href: citationHref({ file_id: result.fileId }) }, interpolate(gettext("Open %(name)s"), { name })),
      move,
    ),
    panel,
  );
  move.setAttribute("aria-label", interpolate(gettext("Move %(name)s…"), { name }));
  return card;
}

// A clarifying question (one message): its answers as buttons that send the one chosen.
export function clarificationItem(message, { ask }) {
  const content = message.content ?? {};
  const question = content.question ?? message.text ?? "";
  const buttons = (content.options ?? []).map((option) =>
    h(
      "button",
      {
        type: "button",
        class: "button small",
        onclick: () => {
          for (const button of buttons) button.disabled = true;
          ask(option);
        },
      },
      option,
    ),
  );
  return h(
    "li",
    { class: "feed-item feed-message message-agent clarification-item" },
    h("div", { class: "message-role" }, gettext("Assistant")),
    h("div", { class: "bubble" }, h("p", { class: "answer" }, question), h("div", { class: "suggestion-actions" }, ...buttons)),
  );
}

// "Choose another folder…" on a suggestion card: the folder tree, and the assistant's alternatives.
export function setUpChooser(item, suggestion, name, respond) {
  const toggle = item.querySelector('[data-action="choose"]');
  const chooser = field(item, "choose-form");
  const parent = (suggestion.source_path ?? "").split("/").slice(0, -1).join("/");
  const picker = folderTreePicker({
    folderId: suggestion.folder_id,
    label: interpolate(gettext("Destination folder for %(name)s"), { name }),
    exclude: [suggestion.target_folder, parent ? `${parent}/` : ""],
    onChoose: (folder) => respond(item, suggestion, { action: "choose", target_folder: folder }),
  });
  field(item, "tree").replaceChildren(picker.element);
  const alternatives = (suggestion.alternatives ?? [])
    .map((alt) => (typeof alt === "string" ? alt : (alt.folder ?? alt.target_folder ?? alt.path)))
    .filter(Boolean);
  field(item, "alternatives").replaceChildren(
    ...alternatives.map((folder) =>
      h(
        "button",
        {
          type: "button",
          class: "button small",
          onclick: () => respond(item, suggestion, { action: "choose", target_folder: folder }),
        },
        interpolate(gettext("Move to %(folder)s"), { folder }),
      ),
    ),
  );
  toggle.addEventListener("click", () => {
    chooser.hidden = !chooser.hidden;
    toggle.setAttribute("aria-expanded", String(!chooser.hidden));
    if (!chooser.hidden) picker.open();
  });
}

// A file moved by any path (a card, the assistant, accept-all, a sync) or moved back by an undo:
// the suggestion cards and the waiting row still asking about it go (not on an undo, which brings
// the file back), the found-file cards show where it is now, and inbox listings count again.
export function fileMoved(feed, { file_id: fileId, to_path: toPath, undone }) {
  if (!undone) {
    for (const card of feed.querySelectorAll(`.suggestion-item[data-file-id="${Number(fileId)}"]`)) {
      if (!card.dataset.deciding) card.remove();
    }
    feed.querySelector(`[data-unsuggested="${Number(fileId)}"]`)?.remove();
  }
  for (const card of feed.querySelectorAll(`.result-card[data-file-id="${Number(fileId)}"]`)) {
    card.dataset.path = toPath;
    const folder = toPath.split("/").slice(0, -1).join("/");
    field(card, "location").textContent = folder ? `${folder}/` : "/";
  }
  for (const listing of feed.querySelectorAll(".result-item[data-inbox-listing]")) countInbox(listing);
}

// A card decided on this page whose move was undone: its suggestion is pending again, and so are
// its buttons.
export function reopenCard(item) {
  delete item.dataset.deciding;
  field(item, "card").classList.remove("decided");
  field(item, "actions").hidden = false;
  for (const button of item.querySelectorAll("button")) button.disabled = false;
  item.querySelector('[data-action="undo"]').hidden = true;
}

// Undecided suggestion cards whose suggestion is no longer pending (decided elsewhere, or the
// file moved under a sync) leave the feed.
export async function pruneSuggestions(feed) {
  const cards = [...feed.querySelectorAll(".suggestion-item[data-suggestion-id]")].filter(
    (card) => !card.dataset.deciding,
  );
  if (!cards.length) return;
  let pending;
  try {
    const page = await api("/api/inbox/suggestions?status=pending&limit=500");
    pending = new Set((page.results ?? page).map((suggestion) => String(suggestion.id)));
  } catch {
    return; // the next event or load tries again
  }
  // Checked again after the request: a card clicked meanwhile shows its own outcome and undo.
  for (const card of cards) {
    if (!card.dataset.deciding && !pending.has(card.dataset.suggestionId)) card.remove();
  }
}

// "Accept all above N%": every pending suggestion at least that sure moves; the cards go.
export function bulkAcceptControl(feed) {
  const percent = h("input", {
    type: "number",
    id: "bulk-accept-percent",
    min: "0",
    max: "100",
    step: "1",
    value: String(DEFAULT_BULK_PERCENT),
    class: "bulk-percent",
  });
  const button = h("button", { type: "submit", class: "button" });
  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" });
  const label = () => {
    button.textContent = interpolate(gettext("Accept all above %(percent)s%%"), { percent: Number(percent.value) || 0 });
  };
  label();
  percent.addEventListener("input", label);
  const form = h(
    "form",
    { class: "bulk-accept", "aria-label": gettext("Accept many suggestions") },
    h("label", { for: percent.id }, gettext("Least sure (%)")),
    percent,
    button,
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = Number(percent.value);
    if (!Number.isFinite(value) || value < 0 || value > 100) {
      status.textContent = gettext("Give a percentage from 0 to 100.");
      return;
    }
    button.disabled = true;
    let outcome;
    try {
      outcome = await api("/api/inbox/suggestions/accept-all", {
        method: "POST",
        body: { min_confidence: value / 100 },
      });
    } catch (error) {
      status.textContent = error.message;
      button.disabled = false;
      return;
    }
    button.disabled = false;
    for (const move of outcome.moves) fileMoved(feed, move);
    const moved = outcome.moves.length;
    const parts = [
      moved
        ? interpolate(ngettext("Moved %(count)s file.", "Moved %(count)s files.", moved), { count: moved })
        : interpolate(gettext("Nothing at %(percent)s%% or above to accept."), { percent: value }),
      ...outcome.failed.map((failure) => `${failure.path}: ${failure.reason}`),
    ];
    status.textContent = parts.join(" ");
  });
  return form;
}
