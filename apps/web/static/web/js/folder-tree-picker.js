// "Choose another folder": the folder's tree (GET /api/inbox/folders/{id}/tree), indented, with
// a box that narrows it by name as one types. Choosing a folder calls `onChoose(path)`.
import { api } from "./api.js";
import { h } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const SEARCH_DELAY_MS = 150;
let pickers = 0;

export function folderTreePicker({ folderId, label, exclude = [], onChoose }) {
  const id = `folder-tree-${++pickers}`;
  const search = h("input", {
    type: "search",
    id: `${id}-search`,
    placeholder: gettext("Search folders by name"),
    autocomplete: "off",
    spellcheck: "false",
    "aria-controls": `${id}-list`,
  });
  const list = h("ul", {
    class: "folder-tree",
    id: `${id}-list`,
    role: "list",
    "aria-label": interpolate(gettext("%(label)s: folders"), { label }),
  });
  const status = h("p", { class: "muted folder-tree-status", role: "status", "aria-live": "polite" });
  const root = h(
    "div",
    { class: "folder-tree-picker" },
    h("label", { for: search.id }, label),
    search,
    status,
    list,
  );
  let timer = null;
  let asked = 0;

  async function show(query) {
    const mine = ++asked;
    status.textContent = gettext("Loading folders…");
    let tree;
    try {
      tree = await api(`/api/inbox/folders/${folderId}/tree?q=${encodeURIComponent(query)}`);
    } catch (error) {
      if (mine === asked) status.textContent = interpolate(gettext("Could not load the folders: %(reason)s"), { reason: error.message });
      return;
    }
    if (mine !== asked) return; // a later search answered first
    const folders = tree.folders.filter((folder) => !exclude.includes(folder.path));
    const none = query ? interpolate(gettext("No folder matches “%(query)s”."), { query }) : gettext("No other folders yet.");
    status.textContent = folders.length ? "" : none;
    list.replaceChildren(
      ...folders.map((folder) =>
        h(
          "li",
          { style: `--depth: ${folder.depth - 1}` },
          h(
            "button",
            {
              type: "button",
              class: "folder-tree-item",
              title: folder.path,
              "aria-label": interpolate(gettext("Move to %(folder)s"), { folder: folder.path }),
              onclick: () => onChoose(folder.path),
            },
            folder.name,
            h("span", { class: "muted" }, ` ${interpolate(ngettext("%(count)s file", "%(count)s files", folder.files), { count: folder.files })}`),
          ),
        ),
      ),
    );
  }

  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => show(search.value.trim()), SEARCH_DELAY_MS);
  });
  return {
    element: root,
    open() {
      show(search.value.trim());
      search.focus();
    },
  };
}
