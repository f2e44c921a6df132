// A conversation whose folder was removed: read-only, its answers shown as the chat page shows them.
import { api } from "./api.js";
import { gettext, interpolate } from "./i18n.js";
import { AnswerView, questionItem } from "./message-view.js";

const root = document.getElementById("kept-conversation");
const messages = document.getElementById("messages");

async function start() {
  let conversation;
  try {
    conversation = await api(`/api/conversations/${root.dataset.conversationId}`);
  } catch (error) {
    document.getElementById("run-status").textContent = interpolate(gettext("Could not open this conversation: %(reason)s."), {
      reason: error.message.replace(/\.$/, ""),
    });
    return;
  }
  for (const message of conversation.messages) {
    if (message.role === "user") messages.append(questionItem(message.text, message.attachments ?? []));
    else if (message.role === "agent") messages.append(AnswerView.finished(message).item);
  }
}

start();
