// The Drive side of the Add folder form: "Connect Google Drive" when Drive is not connected yet,
// then a picker over the user's Drive (GET /api/drive/folders): My Drive and shared drives,
// folders only, a page at a time, with breadcrumbs and a search by name. Picking a folder adds it.
import { ApiError, api } from "./api.js";
import { h } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const ROOT = { parent: "", drive: "", q: "" }; // My Drive's top level

export function setUpDrivePanel({ onAdded, errorBox }) {
  const status = document.getElementById("drive-status");
  const connect = document.getElementById("drive-connect");
  const picker = document.getElementById("drive-picker");
  const search = document.getElementById("drive-search");
  const crumbs = document.getElementById("drive-breadcrumbs");
  const drives = document.getElementById("drive-drives");
  const folders = document.getElementById("drive-folders");
  const more = document.getElementById("drive-more");
  const pickCurrent = document.getElementById("drive-pick-current");
  let shown = false;
  let place = ROOT;
  let nextPage = null;
  let current = null; // the folder being shown (the last breadcrumb), or null at My Drive's root

  connect.addEventListener("click", async () => {
    connect.disabled = true;
    try {
      window.location.assign((await api("/api/drive/connect")).auth_url);
    } catch (error) {
      status.textContent = interpolate(gettext("Could not start connecting Google Drive: %(reason)s"), { reason: error.message });
      connect.disabled = false;
    }
  });

  async function show() {
    if (shown) return;
    shown = true;
    let state;
    try {
      state = await api("/api/drive/status");
    } catch (error) {
      status.textContent = interpolate(gettext("Could not check Google Drive: %(reason)s"), { reason: error.message });
      shown = false;
      return;
    }
    if (!state.connected) {
      status.textContent = state.can_connect
        ? gettext("Connect your Google Drive to pick a folder from it.")
        : gettext("Google Drive is not configured on this server.");
      connect.hidden = !state.can_connect;
      document.getElementById("drive-setup").hidden = state.can_connect;
      return;
    }
    status.textContent =
      state.access === "service_account" ? gettext("Google Drive is reachable through the server's service account.") : "";
    picker.hidden = false;
    browse(ROOT);
  }

  async function browse(next, { append = false } = {}) {
    place = next;
    if (!place.q) search.value = ""; // browsing leaves the search
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(place)) if (value) params.set(key, value);
    if (append && nextPage) params.set("page_token", nextPage);
    status.textContent = place.q
      ? interpolate(gettext("Searching for “%(query)s”…"), { query: place.q })
      : gettext("Loading folders…");
    let page;
    try {
      page = await api(`/api/drive/folders?${params}`);
    } catch (error) {
      status.textContent = error.message;
      if (error instanceof ApiError && error.status === 409) connect.hidden = false;
      return;
    }
    nextPage = page.next_page_token;
    more.hidden = !nextPage;
    const rows = page.folders.map((folder) => folderRow(folder));
    if (append) folders.append(...rows);
    else folders.replaceChildren(...rows);
    if (!append) {
      showCrumbs(page.breadcrumbs);
      drives.replaceChildren(...page.drives.map((drive) => driveRow(drive)));
      drives.hidden = !page.drives.length;
    }
    const count = folders.children.length;
    status.textContent = place.q
      ? interpolate(ngettext("%(count)s folder named like “%(query)s”.", "%(count)s folders named like “%(query)s”.", count), {
          count,
          query: place.q,
        })
      : count
        ? interpolate(ngettext("%(count)s folder here.", "%(count)s folders here.", count), { count })
        : gettext("No folders here.");
  }

  function showCrumbs(trail) {
    current = place.q ? null : (trail.at(-1) ?? null);
    const isRoot = !current || (!current.drive_id && trail.length === 1);
    const searched = { id: null, name: interpolate(gettext("Search: %(query)s"), { query: place.q }) };
    const items = place.q ? [{ id: "", name: gettext("My Drive"), drive_id: null }, searched] : trail;
    crumbs.replaceChildren(
      ...items.map((crumb, index) => {
        const last = index === items.length - 1;
        if (last || crumb.id === null) return h("li", {}, h("span", { "aria-current": "location" }, crumb.name));
        const target = index === 0 && !crumb.drive_id ? ROOT : { parent: crumb.id, drive: crumb.drive_id ?? "", q: "" };
        return h("li", {}, h("button", { type: "button", class: "link-button", onclick: () => browse(target) }, crumb.name));
      }),
    );
    pickCurrent.hidden = isRoot;
    if (!isRoot) {
      pickCurrent.textContent = interpolate(gettext("Add “%(name)s”"), { name: current.name });
      pickCurrent.onclick = () => pick(current);
    }
  }

  // A row that opens a place in the picker (a folder or a shared drive), then any buttons of its own.
  function placeRow({ label, glyph, name, target }, ...actions) {
    return h(
      "li",
      { class: "picker-row" },
      h(
        "button",
        { type: "button", class: "link-button", "aria-label": label, onclick: () => browse(target) },
        h("span", { class: glyph, "aria-hidden": "true" }),
        name,
      ),
      ...actions,
    );
  }

  function folderRow(folder) {
    return placeRow(
      {
        label: interpolate(gettext("Open %(name)s"), { name: folder.name }),
        glyph: "folder-glyph",
        name: folder.name,
        target: { parent: folder.id, drive: folder.drive_id ?? "", q: "" },
      },
      h(
        "button",
        {
          type: "button",
          class: "button small",
          "aria-label": interpolate(gettext("Add %(name)s"), { name: folder.name }),
          onclick: () => pick(folder),
        },
        gettext("Add"),
      ),
    );
  }

  function driveRow(drive) {
    return placeRow({
      label: interpolate(gettext("Open shared drive %(name)s"), { name: drive.name }),
      glyph: "drive-glyph",
      name: drive.name,
      target: { parent: drive.id, drive: drive.id, q: "" },
    });
  }

  async function pick(folder) {
    errorBox.textContent = "";
    status.textContent = interpolate(gettext("Adding %(name)s…"), { name: folder.name });
    try {
      const added = await api("/api/folders", {
        method: "POST",
        body: { source: "drive", drive_folder_id: folder.id, name: folder.name },
      });
      status.textContent = ""; // the folder list announces it
      onAdded(added);
    } catch (error) {
      status.textContent = "";
      errorBox.textContent = error.message;
    }
  }

  const runSearch = () => browse({ ...ROOT, q: search.value.trim() }); // an empty search is My Drive's root
  document.getElementById("drive-search-go").addEventListener("click", runSearch);
  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault(); // not the Add folder form's submit
      runSearch();
    }
  });
  more.addEventListener("click", () => browse(place, { append: true }));

  return { show };
}
