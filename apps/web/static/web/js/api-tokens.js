// Personal API tokens over /api/tokens: make one (its secret shown once, with a copy button),
// list them (never their secrets) and revoke them.
import { api, results } from "./api.js";
import { h } from "./dom.js";
import { dateTime } from "./format.js";
import { gettext, interpolate } from "./i18n.js";

const form = document.getElementById("token-form");
const errorBox = document.getElementById("token-error");
const made = document.getElementById("token-made");
const secretBox = document.getElementById("token-secret");
const copied = document.getElementById("token-copied");
const table = document.getElementById("tokens-table");
const body = document.getElementById("tokens-body");
const empty = document.getElementById("tokens-empty");
const folderSelect = document.getElementById("token-folders");
const folderNames = new Map();

function row(token) {
  const folders = token.folder_ids
    ? token.folder_ids.map((id) => folderNames.get(id) ?? `#${id}`).join(", ")
    : gettext("all");
  const revoke = h(
    "button",
    { type: "button", class: "button danger", "aria-label": interpolate(gettext("Revoke %(name)s"), { name: token.name }) },
    gettext("Revoke"),
  );
  revoke.addEventListener("click", async () => {
    const question = gettext("Revoke “%(name)s”? Programs using it will be refused at once.");
    if (!window.confirm(interpolate(question, { name: token.name }))) return;
    revoke.disabled = true;
    try {
      await api(`/api/tokens/${token.id}`, { method: "DELETE" });
      await load();
    } catch (error) {
      errorBox.textContent = error.message;
      revoke.disabled = false;
    }
  });
  return h(
    "tr",
    { dataset: { tokenId: String(token.id) } },
    h("td", {}, token.name),
    h("td", {}, h("code", {}, `${token.prefix}…`)),
    h("td", {}, token.scopes.join(", ")),
    h("td", {}, folders),
    h("td", {}, dateTime(token.created_at)),
    h("td", {}, dateTime(token.expires_at) || gettext("never")),
    h("td", {}, dateTime(token.last_used_at) || gettext("not yet")),
    h("td", {}, revoke),
  );
}

async function load() {
  const tokens = results(await api("/api/tokens?limit=500"));
  body.replaceChildren(...tokens.map(row));
  table.hidden = tokens.length === 0;
  empty.hidden = tokens.length > 0;
}

async function loadFolders() {
  const folders = results(await api("/api/folders?limit=500"));
  for (const folder of folders) folderNames.set(folder.id, folder.name);
  folderSelect.replaceChildren(...folders.map((folder) => h("option", { value: String(folder.id) }, folder.name)));
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  errorBox.textContent = "";
  const button = form.querySelector('button[type="submit"]');
  const expires = form.elements.expires_in_days.value.trim();
  const folderIds = [...folderSelect.selectedOptions].map((option) => Number(option.value));
  const request = {
    name: form.elements.name.value.trim(),
    scopes: [...form.querySelectorAll('input[name="scopes"]:checked')].map((box) => box.value),
  };
  if (folderIds.length) request.folder_ids = folderIds;
  // An unreadable number is sent as typed: the API says what it expects.
  if (expires) request.expires_in_days = Number.isNaN(Number(expires)) ? expires : Number(expires);
  button.disabled = true;
  try {
    const token = await api("/api/tokens", { method: "POST", body: request });
    secretBox.textContent = token.token;
    copied.textContent = "";
    made.hidden = false;
    form.reset();
    await load();
  } catch (error) {
    errorBox.textContent = error.message;
  } finally {
    button.disabled = false;
  }
});

document.getElementById("token-copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(secretBox.textContent);
    copied.textContent = gettext("Copied.");
  } catch {
    // No clipboard (plain HTTP, a refused permission): select it for the person to copy.
    window.getSelection().selectAllChildren(secretBox);
    copied.textContent = gettext("Selected: press Ctrl+C (⌘C) to copy.");
  }
});

// Folders first: the list names each token's folders.
loadFolders()
  .then(load)
  .catch((error) => {
    errorBox.textContent = interpolate(gettext("Could not load your tokens: %(reason)s"), { reason: error.message });
  });
