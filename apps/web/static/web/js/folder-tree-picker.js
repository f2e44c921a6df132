// "Choose another folder": the folder's tree (GET /api/inbox/folders/{id}/tree), indented, with
// a box that narrows it by name as one types. Choosing a folder calls `onChoose(path)`.
import { api } from "./api.js";
import { h } from "./dom.js";

const SEARCH_DELAY_MS = 150;
let pickers = 0;

export function folderTreePicker({ folderId, label, exclude = [], onChoose }) {
  const id = `folder-tree-${++pickers}`;
  const search = h("input", {
    type: "search",
    id: `${id}-search`,
    class: "folder-tree-search",
    placeholder: "Search folders by name",
    autocomplete: "off",
    spellcheck: "false",
    "aria-controls": `${id}-list`,
  });
  const list = h("ul", { class: "folder-tree", id: `${id}-list`, role: "list", "aria-label": `${label}: folders` });
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
    status.textContent = "Loading folders…";
    let tree;
    try {
      tree = await api(`/api/inbox/folders/${folderId}/tree?q=${encodeURIComponent(query)}`);
    } catch (error) {
      if (mine === asked) status.textContent = `Could not load the folders: ${error.message}`;
      return;
    }
    if (mine !== asked) return; // a later search answered first
    const folders = tree.folders.filter((folder) => !exclude.includes(folder.path));
    status.textContent = folders.length ? "" : query ? `No folder matches “${query}”.` : "No other folders yet.";
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
              "aria-label": `Move to ${folder.path}`,
              onclick: () => onChoose(folder.path),
            },
            h("span", { class: "folder-tree-name" }, folder.name),
            h("span", { class: "muted" }, ` ${folder.files} file${folder.files === 1 ? "" : "s"}`),
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
