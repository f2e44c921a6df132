// The chat page: conversations of one folder, asking, and following each answer as it streams.
import { ApiError, api, results } from "./api.js";
import { ImagePicker } from "./chat-images.js";
import { h, sendOnEnter, statusSetter } from "./dom.js";
import { phaseLabel } from "./format.js";
import { gettext, interpolate } from "./i18n.js";
import { AnswerView, questionItem } from "./message-view.js";
import { relativeTime } from "./relative-times.js";
import { followRun } from "./run-stream.js";

const root = document.getElementById("chat");
const folderId = Number(root.dataset.folderId);
const messages = document.getElementById("messages");
const scroller = document.getElementById("messages-scroll");
const emptyChat = document.getElementById("empty-chat");
const form = document.getElementById("composer");
const question = document.getElementById("question");
// Absent when the server turned agent mode off (AGENT_MODE_ENABLED): every question is standard.
const agentMode = document.getElementById("agent-mode");
// The mode is a preference, kept across reloads and conversations in this browser.
const AGENT_MODE_KEY = "folderchat:agent-mode";
if (agentMode) {
  agentMode.checked = localStorage.getItem(AGENT_MODE_KEY) === "on";
  agentMode.addEventListener("change", () => localStorage.setItem(AGENT_MODE_KEY, agentMode.checked ? "on" : "off"));
}
const send = document.getElementById("send");
const stop = document.getElementById("stop");
const setStatus = statusSetter(document.getElementById("run-status"));
const announcer = document.getElementById("answer-announcer");
const conversationList = document.getElementById("conversation-list");
const images = new ImagePicker(document.getElementById("images"), document.getElementById("chosen-images"));

const NOTICE = gettext("The model is unavailable; these are the most relevant passages.");
const FAILED = gettext("The answer failed.");

// The run being answered survives a reload: its id and events URL are kept for this tab.
const activeRunKey = `folderchat:active-run:${folderId}`;
const activeRun = {
  load: () => JSON.parse(sessionStorage.getItem(activeRunKey) ?? "null"),
  save: (run) => sessionStorage.setItem(activeRunKey, JSON.stringify(run)),
  clear: () => sessionStorage.removeItem(activeRunKey),
};

let conversationId = Number(new URLSearchParams(window.location.search).get("c")) || null;
let busy = false;
let following = null; // the run being followed: {runId, ...}

function append(item) {
  const nearBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
  messages.append(item);
  emptyChat.hidden = true;
  if (nearBottom) scroller.scrollTop = scroller.scrollHeight;
}

function keepScrolled() {
  if (scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 240) scroller.scrollTop = scroller.scrollHeight;
}

function setBusy(on) {
  busy = on;
  send.disabled = on;
  stop.hidden = !on || !following;
  stop.disabled = false;
  offerRegenerate();
}

// Only the conversation's last answer can be regenerated, and not while another is being written.
function offerRegenerate() {
  const answered = [...messages.querySelectorAll(".message-agent[data-message-id]")];
  for (const item of answered) item.querySelector('[data-action="regenerate"]').hidden = true;
  const last = messages.lastElementChild;
  if (!busy && last && answered.at(-1) === last) last.querySelector('[data-action="regenerate"]').hidden = false;
}

// An answer shown complete: rated and regenerated from its own buttons.
function answerControls(view) {
  view.enableRating();
  const button = view.regenerateButton();
  if (!button.dataset.wired) {
    button.dataset.wired = "1";
    button.addEventListener("click", regenerate);
  }
}

function showConversationInUrl(id) {
  conversationId = id;
  const url = new URL(window.location.href);
  url.searchParams.set("c", id);
  history.replaceState(null, "", url);
}

async function loadConversations({ evenWhileRenaming = false } = {}) {
  let conversations;
  try {
    conversations = results(await api(`/api/conversations?folder_id=${folderId}&limit=50`));
  } catch {
    return; // the sidebar is a convenience; the chat works without it
  }
  // A refresh that lands while a title is being edited would sweep the field away under the
  // person's cursor; the edit refreshes the list itself when it ends.
  if (!evenWhileRenaming && conversationList.querySelector(".conversation-rename")) return;
  conversationList.replaceChildren(...conversations.map(conversationItem));
  if (!conversations.length) conversationList.append(h("li", { class: "muted" }, gettext("No conversations yet.")));
}

function conversationItem(conversation) {
  const title = conversation.title || interpolate(gettext("Conversation %(id)s"), { id: String(conversation.id) });
  const at = conversation.last_activity_at;
  const link = h(
    "a",
    { href: `?c=${conversation.id}` },
    h("span", { class: "conversation-title" }, title),
    Object.assign(relativeTime(at), { className: "conversation-time" }),
  );
  if (conversation.id === conversationId) link.setAttribute("aria-current", "page");
  const item = h("li", {}, link);
  const action = (name, label, onclick) =>
    h("button", { type: "button", class: "button quiet small", "aria-label": interpolate(label, { title }), onclick }, name);
  item.append(
    h(
      "div",
      { class: "conversation-actions" },
      action(gettext("Rename"), gettext("Rename “%(title)s”"), () => rename(item, conversation, title)),
      action(gettext("Delete"), gettext("Delete “%(title)s”"), () => remove(conversation, title)),
    ),
  );
  return item;
}

// The title becomes a field in place: Enter saves, Escape leaves it as it was.
function rename(item, conversation, title) {
  const input = h("input", {
    type: "text",
    value: title,
    maxlength: "255",
    required: "",
    "aria-label": gettext("Conversation title"),
  });
  const form = h(
    "form",
    { class: "conversation-rename" },
    input,
    h("button", { type: "submit", class: "button small" }, gettext("Save")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api(`/api/conversations/${conversation.id}`, { method: "PATCH", body: { title: input.value.trim() } });
      setStatus(gettext("Conversation renamed."));
    } catch (error) {
      setStatus(error.message, { failed: true });
    }
    await loadConversations({ evenWhileRenaming: true });
    conversationList.querySelector(`a[href="?c=${conversation.id}"]`)?.focus();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") loadConversations({ evenWhileRenaming: true });
  });
  item.replaceChildren(form);
  input.focus();
  input.select();
}

async function remove(conversation, title) {
  if (!window.confirm(interpolate(gettext("Delete “%(title)s” and its answers? This cannot be undone."), { title }))) return;
  try {
    await api(`/api/conversations/${conversation.id}`, { method: "DELETE" });
  } catch (error) {
    setStatus(error.message, { failed: true });
    return;
  }
  if (conversation.id === conversationId) {
    window.location.assign(window.location.pathname); // the open conversation is gone: start a new one
    return;
  }
  setStatus(gettext("Conversation deleted."));
  await loadConversations({ evenWhileRenaming: true });
  document.getElementById("new-conversation").focus();
}

async function loadConversation(id) {
  const conversation = await api(`/api/conversations/${id}`);
  if (conversation.folder_id !== folderId) throw new Error(gettext("it belongs to another folder"));
  for (const message of conversation.messages) {
    if (message.role === "user") append(questionItem(message.text, message.attachments ?? []));
    else if (message.role === "agent") {
      const view = AnswerView.finished(message);
      answerControls(view);
      append(view.item);
    }
  }
  offerRegenerate();
  scroller.scrollTop = scroller.scrollHeight;
  return conversation;
}

// Replays the run's events from its start (the server keeps them), so the steps and the text
// streamed before a reload are rebuilt, then follows it live until `done` or `error`.
// A continuation streams into the view of the answer it continues.
function follow(run, view = null) {
  activeRun.save(run);
  following = run;
  setBusy(true);
  if (!view) {
    view = new AnswerView();
    append(view.item);
  }
  view.streaming(true);
  let phase = phaseLabel("queued");
  const progress = (text) => {
    phase = text;
    setStatus(text, { working: true });
  };
  progress(phase);
  let answered = false;
  const finish = () => {
    if (document.activeElement === stop) question.focus(); // Stop goes away with the run
    activeRun.clear();
    following = null;
    setBusy(false);
    loadConversations();
  };
  followRun(run.eventsUrl, {
    status: (data) => progress(phaseText(data)),
    tool_call: (data) => {
      view.steps.call(data);
      progress(interpolate(gettext("Running %(tool)s…"), { tool: data.tool_name }));
      keepScrolled();
    },
    tool_result: (data) => {
      view.steps.result(data);
      keepScrolled();
    },
    text_delta: (data) => {
      if (!view.text) progress(phaseLabel("generating"));
      view.delta(data.text);
      keepScrolled();
    },
    text_reset: () => view.reset(),
    notice: (data) => progress(data.message ?? NOTICE),
    message: (data) => {
      answered = true;
      view.finish(data);
      announcer.textContent = data.text;
      answerControls(view);
      keepScrolled();
    },
    done: (data) => {
      setStatus(data.status === "cancelled" ? gettext("Stopped.") : gettext("Answer ready."));
      if (!answered) reloadAfterExpiredLog();
      finish();
    },
    error: (data) => {
      view.fail(data.message ?? FAILED);
      setStatus(data.message ?? FAILED, { failed: true });
      finish();
    },
    reconnecting: () => setStatus(gettext("Connection lost; reconnecting…"), { working: true }),
    open: () => progress(phase),
    lost: () => {
      view.fail(gettext("Lost this answer's progress. Reload the page to see the conversation."));
      setStatus(gettext("Could not follow the answer."), { failed: true });
      finish();
    },
  });
}

// A run finished long ago may have no event log left: its answer is in the conversation.
async function reloadAfterExpiredLog() {
  messages.replaceChildren();
  await loadConversation(conversationId);
}

// Stop: the worker ends the run at its next chunk or tool; `done` then says it was cancelled.
stop.addEventListener("click", async () => {
  if (!following) return;
  stop.disabled = true;
  setStatus(gettext("Stopping…"), { working: true });
  try {
    await api(`/api/runs/${following.runId}/cancel`, { method: "POST" });
  } catch (error) {
    // 409: it finished first, and its `done` is on the way.
    if (!(error instanceof ApiError && error.status === 409)) {
      setStatus(error.message, { failed: true });
      stop.disabled = false;
    }
  }
});

async function regenerate() {
  if (busy || !conversationId) return;
  setBusy(true);
  setStatus(gettext("Sending…"), { working: true });
  let accepted;
  try {
    accepted = await api(`/api/conversations/${conversationId}/regenerate`, { method: "POST" });
  } catch (error) {
    setStatus(error.message, { failed: true });
    setBusy(false);
    return;
  }
  follow({ runId: accepted.run_id, conversationId: accepted.conversation_id, eventsUrl: accepted.events_url });
}

function phaseText(data) {
  const text = phaseLabel(data.phase);
  return data.iteration ? interpolate(gettext("Step %(n)s: %(text)s"), { n: data.iteration, text }) : text;
}

async function ask(text) {
  setBusy(true);
  setStatus(gettext("Sending…"), { working: true });
  let accepted;
  try {
    accepted = await api(`/api/folders/${folderId}/chat`, {
      method: "POST",
      body: images.body({
        message: text,
        conversation_id: conversationId,
        agent_mode: Boolean(agentMode?.checked),
      }),
    });
  } catch (error) {
    setBusy(false);
    if (error.status === 404) showAccessLost();
    else setStatus(error.message, { failed: true });
    return false;
  }
  append(questionItem(text, images.take()));
  showConversationInUrl(accepted.conversation_id);
  follow({ runId: accepted.run_id, conversationId: accepted.conversation_id, eventsUrl: accepted.events_url });
  return true;
}

// Removed from the folder (or the folder removed) while this page was open: say so plainly, and
// stop offering what would fail; the sidebar's conversations went with the access.
function showAccessLost() {
  document.getElementById("access-lost").hidden = false;
  question.disabled = true;
  send.disabled = true;
  if (agentMode) agentMode.disabled = true;
  conversationList.replaceChildren();
  setStatus(gettext("You no longer have access to this folder."), { failed: true });
}

document.addEventListener("folder-access-lost", showAccessLost);

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = question.value.trim();
  if (!text || busy) return;
  if (await ask(text)) question.value = "";
  question.focus();
});

sendOnEnter(question, form);

AnswerView.continueAnswer = async (message, view, button) => {
  if (busy) return;
  button.disabled = true;
  let accepted;
  try {
    accepted = await api(`/api/messages/${message.id}/continue`, { method: "POST" });
  } catch (error) {
    button.disabled = false;
    setStatus(error.message, { failed: true });
    return;
  }
  button.closest(".message-truncated")?.remove();
  follow({ runId: accepted.run_id, conversationId: accepted.conversation_id, eventsUrl: accepted.events_url }, view);
};

// A reload keeps ?c= (set as soon as a question is accepted), which is how an answer in progress
// is found again; a page without it starts a new conversation.
async function start() {
  loadConversations();
  if (!conversationId) return;
  let conversation;
  try {
    conversation = await loadConversation(conversationId);
  } catch (error) {
    conversationId = null;
    setStatus(interpolate(gettext("Could not open this conversation: %(reason)s."), { reason: error.message.replace(/\.$/, "") }), {
      failed: true,
    });
    return;
  }
  const pending = activeRun.load();
  if (pending?.conversationId !== conversation.id) return;
  const answered = conversation.messages.some(
    (message) => message.metadata?.run_id === pending.runId || message.metadata?.continued_by?.includes(pending.runId),
  );
  if (answered) activeRun.clear();
  else follow(pending);
}

start();
