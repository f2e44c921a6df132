// The Share dialog of a folder the user owns: its members (change a role, remove), add someone by
// username or email, or make an invitation link, for one person or anyone holding it.
import { api, results } from "./api.js";
import { field, h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const dialog = document.getElementById("share-dialog");
const error = field(dialog, "error");
const status = field(dialog, "status");
let current = null;

dialog.querySelector('[data-action="close"]').addEventListener("click", () => dialog.close());

export async function openShareDialog(folder) {
  current = folder;
  field(dialog, "folder-name").textContent = folder.name;
  field(dialog, "invite-link-row").hidden = true;
  error.textContent = "";
  status.textContent = "";
  dialog.showModal();
  await loadMembers();
}

async function loadMembers() {
  const list = field(dialog, "members");
  let members;
  try {
    members = results(await api(`/api/folders/${current.id}/members?limit=200`));
  } catch (failure) {
    error.textContent = failure.message;
    return;
  }
  field(dialog, "members-empty").hidden = members.length > 0;
  list.replaceChildren(...members.map(memberRow));
}

function memberRow(member) {
  const label = interpolate(gettext("Role of %(name)s"), { name: member.username });
  const select = h(
    "select",
    {
      "aria-label": label,
      onchange: () =>
        act(
          () => api(memberUrl(member), { method: "PATCH", body: { role: select.value } }),
          roleSaid(select.value, gettext("%(name)s is now an editor."), gettext("%(name)s is now a viewer."), member.username),
        ),
    },
    h("option", { value: "viewer" }, gettext("Viewer")),
    h("option", { value: "editor" }, gettext("Editor")),
  );
  select.value = member.role;
  const remove = h(
    "button",
    { type: "button", class: "button small", "aria-label": interpolate(gettext("Remove %(name)s"), { name: member.username }) },
    gettext("Remove"),
  );
  remove.addEventListener("click", () => {
    // Removal takes the folder, and their conversations of it, away at once: asked first.
    const question = gettext("Remove %(name)s from %(folder)s? They lose access at once.");
    if (!window.confirm(interpolate(question, { name: member.username, folder: current.name }))) return;
    act(
      () => api(memberUrl(member), { method: "DELETE" }),
      interpolate(gettext("%(name)s no longer has access."), { name: member.username }),
    );
  });
  return h("li", { class: "member", dataset: { username: member.username } }, h("span", {}, member.username), select, remove);
}

function memberUrl(member) {
  return `/api/folders/${current.id}/members/${member.user_id}`;
}

// A sentence about someone's role, whole in each language (an article alone does not translate).
function roleSaid(role, asEditor, asViewer, name) {
  return interpolate(role === "editor" ? asEditor : asViewer, { name });
}

// Runs one change of the member list, then says it was saved (or why not) and shows the list as
// the server now holds it.
async function act(call, saved) {
  error.textContent = "";
  status.textContent = "";
  try {
    await call();
    status.textContent = saved;
  } catch (failure) {
    error.textContent = failure.message;
  }
  await loadMembers();
}

field(dialog, "add-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const body = { username: form.username.value.trim(), role: form.role.value };
  await act(async () => {
    await api(`/api/folders/${current.id}/members`, { method: "POST", body });
    form.username.value = "";
  }, roleSaid(body.role, gettext("%(name)s was added as an editor."), gettext("%(name)s was added as a viewer."), body.username));
});

const inviteForm = field(dialog, "invite-form");
const inviteeField = field(dialog, "invitee-field");

// Who the link admits is always chosen, never assumed: the API refuses a request without it.
inviteForm.addEventListener("change", (event) => {
  if (event.target.name !== "audience") return;
  const forPerson = event.target.value === "person";
  inviteeField.hidden = !forPerson;
  inviteForm.invitee.required = forPerson;
});

inviteForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  const form = event.target;
  const anyone = form.audience.value === "anyone";
  const body = { role: form.role.value, anyone_with_link: anyone };
  if (!anyone) body.invitee = form.invitee.value.trim();
  try {
    const invitation = await api(`/api/folders/${current.id}/invitations`, { method: "POST", body });
    const link = field(dialog, "invite-link");
    link.value = invitation.url;
    field(dialog, "invite-link-row").hidden = false;
    link.select();
  } catch (failure) {
    error.textContent = failure.message;
  }
});
