// The inbox feed: the assistant's conversation and file cards with suggestions, in time order.
import { renderAnswer } from "./answer.js";
import { ApiError, api, results } from "./api.js";
import { clone, field, h } from "./dom.js";
import { timeAgo } from "./format.js";

const feed = document.getElementById("inbox-feed");
const status = document.getElementById("inbox-status");

const OUTCOMES = {
  accept: (target) => `Moved to ${target}.`,
  reject: () => "Kept in the inbox.",
  choose: (target) => `Moved to ${target}.`,
};

// An endpoint that is not there (404) counts as empty, so the page works before the inbox does.
async function listOrNothing(path) {
  try {
    return { items: results(await api(path)), available: true };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return { items: [], available: false };
    throw error;
  }
}

async function load() {
  let conversations;
  let suggestions;
  try {
    [conversations, suggestions] = await Promise.all([
      listOrNothing("/api/inbox/conversations"),
      listOrNothing("/api/inbox/suggestions?status=pending"),
    ]);
  } catch (error) {
    status.textContent = `Could not load the inbox: ${error.message}`;
    return;
  }
  const suggestedMessages = new Set(suggestions.items.map((suggestion) => suggestion.message_id ?? suggestion.message));
  const entries = [
    ...conversations.items.flatMap((conversation) =>
      (conversation.messages ?? [])
        .filter((message) => !suggestedMessages.has(message.id))
        .map((message) => ({ at: message.created_at, node: messageItem(message) })),
    ),
    ...suggestions.items.map((suggestion) => ({ at: suggestion.created_at, node: suggestionCard(suggestion) })),
  ].sort((a, b) => new Date(a.at) - new Date(b.at));
  feed.replaceChildren(...entries.map((entry) => entry.node));
  if (entries.length) status.textContent = "";
  else if (!conversations.available && !suggestions.available)
    status.textContent = "The inbox assistant is not available on this server yet. Your folders and chats work as usual.";
  else status.textContent = "Your inbox is empty. New files in an inbox folder appear here with a suggestion for where they belong.";
}

function messageItem(message) {
  const item = clone("feed-message");
  item.classList.add(message.role === "user" ? "message-user" : "message-agent");
  field(item, "role").textContent = message.role === "user" ? "You" : "Assistant";
  renderAnswer(field(item, "text"), message.text ?? message.content?.text ?? "");
  setTime(field(item, "time"), message.created_at);
  return item;
}

function suggestionCard(suggestion) {
  const item = clone("suggestion-card");
  const path = suggestion.source_path ?? suggestion.file?.path ?? "";
  const name = suggestion.file_name ?? suggestion.file?.name ?? path.split("/").at(-1);
  field(item, "file-name").textContent = name;
  field(item, "path").textContent = path;
  field(item, "target").textContent = suggestion.target_folder;
  if (suggestion.confidence !== undefined) {
    field(item, "confidence").textContent = `(${Math.round(suggestion.confidence * 100)}% sure)`;
  }
  field(item, "reasoning").textContent = suggestion.reasoning ?? "";
  setTime(field(item, "time"), suggestion.created_at);
  const accept = item.querySelector('[data-action="accept"]');
  accept.textContent = `Move to ${suggestion.target_folder}`;
  accept.addEventListener("click", () => respond(item, suggestion, { action: "accept" }));
  item.querySelector('[data-action="reject"]').addEventListener("click", () =>
    respond(item, suggestion, { action: "reject" }),
  );
  setUpChooser(item, suggestion, name);
  return item;
}

function setUpChooser(item, suggestion, name) {
  const toggle = item.querySelector('[data-action="choose"]');
  const form = field(item, "choose-form");
  const input = field(item, "choose-input");
  const options = field(item, "choose-options");
  // Ids unique per card tie the label and the suggestions list to this card's input.
  input.id = `choose-${suggestion.id}`;
  options.id = `choose-options-${suggestion.id}`;
  input.setAttribute("list", options.id);
  field(item, "choose-label").htmlFor = input.id;
  field(item, "choose-label").textContent = `Destination folder for ${name}`;
  const alternatives = (suggestion.alternatives ?? []).map((alt) =>
    typeof alt === "string" ? alt : (alt.target_folder ?? alt.path ?? alt.folder),
  );
  options.replaceChildren(...alternatives.filter(Boolean).map((value) => h("option", { value })));
  toggle.addEventListener("click", () => {
    form.hidden = !form.hidden;
    toggle.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) input.focus();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const target = input.value.trim();
    if (target) respond(item, suggestion, { action: "choose", target_folder: target });
  });
}

async function respond(item, suggestion, body) {
  const buttons = item.querySelectorAll("button");
  const outcome = field(item, "outcome");
  for (const button of buttons) button.disabled = true;
  try {
    await api(`/api/inbox/suggestions/${suggestion.id}/respond`, { method: "POST", body });
  } catch (error) {
    outcome.textContent = error.message;
    for (const button of buttons) button.disabled = false;
    return;
  }
  field(item, "actions").hidden = true;
  field(item, "choose-form").hidden = true;
  field(item, "card").classList.add("decided");
  outcome.textContent = OUTCOMES[body.action](body.target_folder ?? suggestion.target_folder);
  // The button that had focus is gone with the actions: keep keyboard users on this card.
  outcome.tabIndex = -1;
  outcome.focus();
}

function setTime(element, iso) {
  element.dateTime = iso ?? "";
  element.textContent = iso ? timeAgo(iso) : "";
}

load();
