// The inbox: the assistant's conversation, file cards with suggestions (accept, keep, or choose
// another folder), moves with Undo, and a message box to the assistant whose steps stream as on
// the chat page. New suggestions, moves, guideline proposals and unsuggested inbox files arrive
// live on the inbox's one event stream, for every folder however many.
import { renderAnswer } from "./answer.js";
import { ApiError, api, results } from "./api.js";
import { clone, field, h, sendOnEnter, statusSetter } from "./dom.js";
import { closeOnLeave } from "./folder-stream.js";
import { phaseLabel } from "./format.js";
import { guidelineCard } from "./guideline-card.js";
import { gettext, interpolate } from "./i18n.js";
import {
  bulkAcceptControl,
  clarificationItem,
  fileMoved,
  pruneSuggestions,
  reopenCard,
  resultItem,
  setUpChooser,
} from "./inbox-cards.js";
import { unsuggestedCard } from "./inbox-files.js";
import { followInbox } from "./inbox-stream.js";
import { AnswerView, questionItem } from "./message-view.js";
import { setRelativeTime } from "./relative-times.js";
import { followRun } from "./run-stream.js";
import "./inbox-upload.js";

const SUGGESTION_BATCH_MS = 100;
const feed = document.getElementById("inbox-feed");
const status = document.getElementById("inbox-status");
const form = document.getElementById("inbox-composer");
const folderSelect = document.getElementById("inbox-folder");
const messageBox = document.getElementById("inbox-message");
const send = document.getElementById("inbox-send");
const setRunStatus = statusSetter(document.getElementById("inbox-run-status"));
const shown = { messages: new Set(), suggestions: new Set(), moves: new Set(), proposals: new Set(), files: new Set() };
const streams = [];
const undone = new Set(); // moves already undone: their messages offer no Undo

const OUTCOMES = {
  accept: (target) => interpolate(gettext("Moved to %(folder)s."), { folder: target }),
  reject: () => gettext("Kept in the inbox."),
  choose: (target) => interpolate(gettext("Moved to %(folder)s."), { folder: target }),
};
const FAILED = gettext("The assistant failed.");

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
  let folders;
  let waiting;
  try {
    let moves;
    [conversations, suggestions, folders, moves, waiting] = await Promise.all([
      listOrNothing("/api/inbox/conversations"),
      listOrNothing("/api/inbox/suggestions?status=pending"),
      api("/api/folders?limit=200").then(results),
      listOrNothing("/api/inbox/moves?limit=500"),
      listOrNothing("/api/inbox/files/waiting"),
    ]);
    for (const move of moves.items) if (move.undone_at) undone.add(move.id);
  } catch (error) {
    status.textContent = interpolate(gettext("Could not load the inbox: %(reason)s"), { reason: error.message });
    return;
  }
  setUpFolders(folders, conversations.items);
  const suggestedMessages = new Set(suggestions.items.map((suggestion) => suggestion.message_id));
  const entries = [
    ...conversations.items.flatMap((conversation) =>
      (conversation.messages ?? [])
        // A move the user dictated is shown by its result ("Moved … Undo"), not as a suggestion.
        .filter((message) => !suggestedMessages.has(message.id) && message.metadata?.agent !== "user")
        .map((message) => ({ at: message.created_at, node: messageItem(message) })),
    ),
    ...suggestions.items.map((suggestion) => ({ at: suggestion.created_at, node: suggestionCard(suggestion) })),
  ].sort((a, b) => new Date(a.at) - new Date(b.at));
  feed.replaceChildren(...entries.map((entry) => entry.node), ...waiting.items.map(waitingCard));
  feed.before(bulkAcceptControl(feed));
  showEmptyState(conversations.available || suggestions.available);
  if (folders.length) streams.push(follow());
}

function showEmptyState(available) {
  if (feed.children.length) status.textContent = "";
  else if (!available)
    status.textContent = gettext("The inbox assistant is not available on this server yet. Your folders and chats work as usual.");
  else
    status.textContent = gettext(
      "Your inbox is empty. New files in an inbox folder appear here with a suggestion for where they belong.",
    );
}

function setUpFolders(folders, conversations) {
  folderSelect.replaceChildren(...folders.map((folder) => h("option", { value: folder.id }, folder.name)));
  const latest = conversations[0]?.folder_id;
  if (latest) folderSelect.value = String(latest);
  form.hidden = !folders.length;
}

function follow() {
  return followInbox({
    suggestion: (data) => {
      feed.querySelector(`[data-unsuggested="${data.file_id}"]`)?.remove();
      addSuggestion(data.suggestion_id);
    },
    inbox_file: (data) => {
      if (!shown.files.has(data.file_id)) appendLive(waitingCard(data));
    },
    guideline_proposal: (data) => {
      if (!shown.proposals.has(data.message_id)) appendLive(proposalItem(data));
    },
    // A sync saw files move: cards of suggestions no longer pending go.
    sync: (data) => (data.moved || data.deleted) && pruneSuggestions(feed),
    file_moved: (data) => {
      // Replayed when the stream opens: a move undone since changes nothing now.
      if (!data.undone && undone.has(data.move_id)) return;
      fileMoved(feed, data);
      if (data.undone) return backInInbox(data);
      if (data.automatic && !shown.moves.has(data.move_id)) {
        appendLive(moveItem({ id: data.move_id, from: data.from_path, to: data.to_path, automatic: true }));
      }
    },
  });
}

let waitingLookup = null;

// An undo brought a file back: the suggestion it was moved by is open again (a card decided on
// this page offers its buttons again), or, after a move the user dictated, it waits without one.
function backInInbox({ suggestion_id: suggestionId }) {
  if (suggestionId) {
    shown.suggestions.delete(suggestionId);
    addSuggestion(suggestionId);
  }
  waitingLookup ??= setTimeout(showWaiting, SUGGESTION_BATCH_MS);
}

async function showWaiting() {
  waitingLookup = null;
  let files;
  try {
    files = results(await api("/api/inbox/files/waiting"));
  } catch {
    return; // the next load shows them
  }
  for (const file of files) {
    if (!feed.querySelector(`[data-unsuggested="${Number(file.id)}"]`)) appendLive(waitingCard(file));
  }
}

// Events name a suggestion only: the ids of a burst (an organize run, or the log replayed when a
// stream opens) are looked up together, in one read of the pending list.
const wanted = new Set();
let lookup = null;

function addSuggestion(id) {
  if (!id || shown.suggestions.has(id)) return;
  wanted.add(id);
  lookup ??= setTimeout(showWanted, SUGGESTION_BATCH_MS);
}

async function showWanted() {
  const ids = [...wanted];
  wanted.clear();
  lookup = null;
  let pending;
  try {
    pending = new Map(results(await api("/api/inbox/suggestions?status=pending&limit=100")).map((item) => [item.id, item]));
  } catch {
    return; // the next load shows them
  }
  for (const id of ids) {
    const suggestion = pending.get(id);
    if (!suggestion || shown.suggestions.has(id)) continue;
    const decided = feed.querySelector(`.suggestion-item[data-suggestion-id="${Number(id)}"]`);
    if (!decided) appendLive(suggestionCard(suggestion));
    else {
      reopenCard(decided);
      shown.suggestions.add(id);
    }
  }
}

function appendLive(node) {
  feed.append(node);
  status.textContent = "";
}

function waitingCard(file) {
  shown.files.add(file.id ?? file.file_id);
  return unsuggestedCard(file, { onSuggested: (suggestion) => appendLive(suggestionCard(suggestion)) });
}

function proposalItem(proposal, text) {
  shown.proposals.add(proposal.message_id);
  return guidelineCard(proposal, { text });
}

function messageItem(message) {
  shown.messages.add(message.id);
  const proposal = message.metadata?.guideline_proposal;
  if (proposal) return proposalItem({ ...proposal, message_id: message.id }, message.content?.text?.split("\n\n")[0]);
  if (message.type === "search_result") return resultItem(message, { ask });
  if (message.type === "clarification") return clarificationItem(message, { ask });
  const moveId = message.content?.moveId;
  if (message.type === "action_result" && moveId) {
    return moveItem({ id: moveId, text: message.text ?? message.content?.details, createdAt: message.created_at });
  }
  if (message.role !== "user" && (!message.type || message.type === "text")) {
    // An answer reloaded renders as it did live: citations, steps and all.
    const item = AnswerView.finished(message).item;
    item.classList.add("feed-item");
    const time = h("time", { class: "feed-time" });
    setTime(time, message.created_at);
    item.append(time);
    return item;
  }
  const item = clone("feed-message");
  item.classList.add(message.role === "user" ? "message-user" : "message-agent");
  field(item, "role").textContent = message.role === "user" ? gettext("You") : gettext("Assistant");
  renderAnswer(field(item, "text"), message.text ?? message.content?.text ?? "", {
    citations: message.citations ?? message.content?.citations ?? [],
  });
  if (message.type === "summary") {
    const paths = (message.content?.sources ?? []).map((source) => source.path).join(", ");
    field(item, "text").append(h("p", { class: "muted" }, interpolate(gettext("Summarised from %(paths)s"), { paths })));
  }
  setTime(field(item, "time"), message.created_at);
  return item;
}

// A move the assistant made (asked or automatic), with Undo while it stands.
function moveItem({ id, text, from, to, automatic, createdAt }) {
  shown.moves.add(id);
  const item = clone("move-item");
  const moved = automatic
    ? gettext("Moved %(from)s to %(to)s automatically. Undo it if that was wrong.")
    : gettext("Moved %(from)s to %(to)s. Undo it if that was wrong.");
  field(item, "text").textContent = text ?? interpolate(moved, { from, to });
  setTime(field(item, "time"), createdAt ?? new Date().toISOString());
  const button = item.querySelector('[data-action="undo"]');
  button.setAttribute("aria-label", interpolate(gettext("Undo the move of %(name)s"), { name: (to ?? text ?? "").split("/").at(-1) }));
  button.addEventListener("click", () => undo(id, button, field(item, "outcome")));
  button.hidden = undone.has(id);
  return item;
}

async function undo(moveId, button, outcome) {
  button.disabled = true;
  try {
    const move = await api(`/api/inbox/moves/${moveId}/undo`, { method: "POST" });
    outcome.textContent = interpolate(gettext("Moved back to %(path)s."), { path: move.from_path });
    undone.add(moveId);
    button.hidden = true;
  } catch (error) {
    outcome.textContent = error.message;
    // Already undone stays done; anything else may be tried again.
    button.disabled = error instanceof ApiError && error.status === 409;
  }
  outcome.tabIndex = -1;
  outcome.focus();
}

function suggestionCard(suggestion) {
  shown.suggestions.add(suggestion.id);
  const item = clone("suggestion-card");
  const path = suggestion.source_path ?? suggestion.file_path ?? "";
  const name = suggestion.file_name ?? path.split("/").at(-1);
  Object.assign(item.dataset, { fileId: suggestion.file_id, suggestionId: suggestion.id });
  field(item, "folder-name").textContent = suggestion.folder_name ?? "";
  field(item, "file-name").textContent = name;
  field(item, "path").textContent = path;
  field(item, "target").textContent = suggestion.target_folder;
  if (suggestion.confidence !== undefined) {
    field(item, "confidence").textContent = interpolate(gettext("(%(percent)s%% sure)"), { percent: Math.round(suggestion.confidence * 100) });
  }
  field(item, "reasoning").textContent = suggestion.reasoning ?? "";
  setTime(field(item, "time"), suggestion.created_at);
  const accept = item.querySelector('[data-action="accept"]');
  accept.textContent = interpolate(gettext("Move to %(folder)s"), { folder: suggestion.target_folder });
  accept.addEventListener("click", () => respond(item, suggestion, { action: "accept" }));
  item.querySelector('[data-action="reject"]').addEventListener("click", () =>
    respond(item, suggestion, { action: "reject" }),
  );
  setUpChooser(item, suggestion, name, respond);
  return item;
}

async function respond(item, suggestion, body) {
  const buttons = item.querySelectorAll("button");
  const outcome = field(item, "outcome");
  for (const button of buttons) button.disabled = true;
  item.dataset.deciding = "true"; // its own move's event must not take the card away
  let answer;
  try {
    answer = await api(`/api/inbox/suggestions/${suggestion.id}/respond`, { method: "POST", body });
  } catch (error) {
    outcome.textContent = error.message;
    for (const button of buttons) button.disabled = false;
    delete item.dataset.deciding;
    return;
  }
  field(item, "actions").hidden = true;
  field(item, "choose-form").hidden = true;
  field(item, "card").classList.add("decided");
  outcome.textContent = OUTCOMES[body.action](body.target_folder ?? suggestion.target_folder);
  if (answer.move) {
    shown.moves.add(answer.move.id);
    if (answer.message) shown.messages.add(answer.message.id);
    const undoButton = item.querySelector('[data-action="undo"]');
    undoButton.hidden = false;
    undoButton.disabled = false;
    undoButton.setAttribute("aria-label", interpolate(gettext("Undo the move of %(name)s"), { name: answer.move.to_path.split("/").at(-1) }));
    undoButton.onclick = () => undo(answer.move.id, undoButton, outcome);
  }
  // The button that had focus is gone with the actions: keep keyboard users on this card.
  outcome.tabIndex = -1;
  outcome.focus();
}

function setTime(element, iso) {
  setRelativeTime(element, iso, { empty: "" });
}

// --- talking to the assistant ------------------------------------------------------------------

async function ask(text) {
  send.disabled = true;
  setRunStatus(gettext("Sending…"), { working: true });
  let accepted;
  try {
    accepted = await api("/api/inbox/conversations", {
      method: "POST",
      body: { folder_id: Number(folderSelect.value), message: text },
    });
  } catch (error) {
    setRunStatus(error.message, { failed: true });
    send.disabled = false;
    return false;
  }
  appendLive(questionItem(text));
  shown.messages.add(accepted.message_id);
  const view = new AnswerView();
  view.streaming(true);
  appendLive(view.item);
  setRunStatus(gettext("Waiting for the assistant…"), { working: true });
  const finish = () => {
    send.disabled = false;
  };
  followRun(accepted.events_url, {
    status: (data) => setRunStatus(phaseLabel(data.phase ?? "working"), { working: true }),
    tool_call: (data) => {
      view.steps.call(data);
      setRunStatus(interpolate(gettext("Running %(tool)s…"), { tool: data.tool_name }), { working: true });
    },
    tool_result: (data) => view.steps.result(data),
    text_delta: (data) => view.delta(data.text),
    // Text a turn streamed before calling tools, or a reply whose call failed: not the answer.
    text_reset: () => view.reset(),
    message: (data) => {
      // The answer is the text message; the others (search results, moves, suggestions) get their own items.
      if (!data.type || data.type === "text") return view.finish(data);
      if (data.type === "suggestion") return addSuggestion(data.content?.suggestionId ?? data.content?.suggestion_id);
      if (!shown.messages.has(data.id)) appendLive(messageItem(data));
    },
    suggestion: (data) => addSuggestion(data.suggestion_id),
    done: () => {
      view.streaming(false);
      if (!view.text && !view.item.querySelector(".step")) view.item.remove();
      setRunStatus(gettext("Answered."));
      finish();
    },
    error: (data) => {
      view.fail(data.message ?? FAILED);
      setRunStatus(data.message ?? FAILED, { failed: true });
      finish();
    },
    reconnecting: () => setRunStatus(gettext("Connection lost; reconnecting…"), { working: true }),
    lost: () => {
      view.fail(gettext("Lost this answer's progress. Reload the page to see the conversation."));
      finish();
    },
  });
  return true;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = messageBox.value.trim();
  if (!text || send.disabled) return;
  if (await ask(text)) messageBox.value = "";
  messageBox.focus();
});

sendOnEnter(messageBox, form);

closeOnLeave(() => streams);
load();
