// The Evaluate tab's Feedback view: the folder's rated answers (GET /api/folders/{id}/feedback)
// with filters by rating, mode, model and date, a table of counts per week, and for editors "Add to
// evaluation" on an answer rated not helpful: the file that answers it, picked from the folder's
// files as one types (GET /api/folders/{id}/files?name=), into a set
// (POST /api/messages/{id}/evaluation-question).
import { api, results } from "./api.js";
import { clone, field, h } from "./dom.js";
import { dateTime } from "./format.js";
import { formatNumber, gettext, interpolate } from "./i18n.js";

const PAGE_SIZE = 25;
const SETS_SHOWN = 200;
const FILES_SHOWN = 20;
const SEARCH_DELAY_MS = 200;

const root = document.getElementById("evaluate-feedback");
const folderId = root.dataset.folderId;
const canEdit = root.dataset.canEdit === "true";
const filters = document.getElementById("feedback-filters");
const list = document.getElementById("rated-list");
const status = document.getElementById("rated-status");
const more = document.getElementById("rated-more");
let shown = 0;
let asked = 0; // the latest load: an older one answering late is dropped
let sets = null; // the folder's evaluation sets, loaded when an answer is first added

function query(offset) {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
  for (const [name, value] of new FormData(filters)) if (value) params.set(name, String(value));
  return `/api/folders/${folderId}/feedback?${params}`;
}

async function load({ append = false } = {}) {
  const mine = ++asked;
  status.hidden = false;
  status.textContent = gettext("Loading…");
  let page;
  try {
    page = await api(query(append ? shown : 0));
  } catch (error) {
    if (mine === asked) status.textContent = interpolate(gettext("The ratings could not be loaded: %(reason)s"), { reason: error.message });
    return;
  }
  if (mine !== asked) return;
  if (!append) {
    list.replaceChildren();
    shown = 0;
    renderWeeks(page);
    renderModels(page.models);
  }
  list.append(...page.results.map(ratedItem));
  shown += page.results.length;
  more.hidden = !page.next;
  status.textContent = shown ? "" : page.scope === "mine" ? gettext("You have rated no answer that matches.") : gettext("No rated answer matches.");
  status.hidden = shown > 0;
}

function renderModels(models) {
  const select = filters.elements.model;
  const chosen = select.value;
  select.replaceChildren(
    h("option", { value: "" }, gettext("Any")),
    ...models.map((model) => h("option", { value: model }, model)),
  );
  select.value = models.includes(chosen) ? chosen : "";
}

function modeText(mode) {
  return { standard: gettext("standard"), agent: gettext("agent") }[mode] ?? (mode || gettext("unknown"));
}

function renderWeeks(page) {
  document.getElementById("feedback-totals").textContent = interpolate(
    gettext("Helpful: %(up)s · Not helpful: %(down)s"),
    { up: formatNumber(page.totals.up), down: formatNumber(page.totals.down) },
  );
  document.getElementById("weeks-table").hidden = page.weeks.length === 0;
  document.getElementById("weeks-body").replaceChildren(
    ...page.weeks.map((week) => {
      const row = clone("week-row");
      const when = field(row, "week");
      when.dateTime = week.week;
      when.textContent = new Date(`${week.week}T00:00:00`).toLocaleDateString(document.documentElement.lang || undefined);
      field(row, "mode").textContent = modeText(week.mode);
      field(row, "model").textContent = week.model || "–";
      field(row, "up").textContent = formatNumber(week.up);
      field(row, "down").textContent = formatNumber(week.down);
      return row;
    }),
  );
}

function ratedItem(rated) {
  const item = clone("rated-item");
  const badge = field(item, "rating");
  badge.dataset.status = rated.rating === "down" ? "error" : "ready";
  badge.textContent = rated.rating === "down" ? gettext("Not helpful") : gettext("Helpful");
  const when = field(item, "when");
  when.dateTime = rated.rated_at;
  when.textContent = dateTime(rated.rated_at);
  field(item, "meta").textContent = [rated.asked_by, modeText(rated.mode), rated.model].filter(Boolean).join(" · ");
  field(item, "question").textContent = rated.question;
  field(item, "answer").textContent = rated.answer;
  const comment = field(item, "comment");
  comment.hidden = !rated.comment;
  comment.textContent = interpolate(gettext("Comment: %(comment)s"), { comment: rated.comment });
  showSets(item, rated.in_sets);
  if (canEdit) wireAdding(item, rated);
  return item;
}

function showSets(item, inSets) {
  const line = field(item, "sets");
  line.replaceChildren();
  if (!inSets.length) return;
  line.append(gettext("In evaluation: "));
  inSets.forEach((set, index) => {
    if (index) line.append(", ");
    line.append(h("a", { href: `/folders/${folderId}/evaluate?set=${set.id}` }, set.name));
  });
}

async function folderSets() {
  sets ??= results(await api(`/api/folders/${folderId}/evaluations?limit=${SETS_SHOWN}`));
  return sets;
}

// The add form: its fields get ids of their own (one form per answer), the file box a list of the
// answer's cited files, then of the folder's files whose name holds what is typed.
function wireAdding(item, rated) {
  const button = field(item, "add");
  const form = field(item, "add-form");
  const key = `add-${rated.message_id}`;
  for (const name of ["file", "fact", "set"]) {
    field(form, name).id = `${key}-${name}`;
    field(form, `${name}-label`).htmlFor = `${key}-${name}`;
  }
  const fileBox = field(form, "file");
  const choices = h("datalist", { id: `${key}-files` });
  fileBox.setAttribute("list", choices.id);
  form.append(choices);
  button.hidden = rated.rating !== "down" || rated.in_sets.length > 0;
  form.id = `${key}-form`;
  button.setAttribute("aria-expanded", "false");
  button.setAttribute("aria-controls", form.id);
  showFiles(choices, rated.cited_files);

  button.addEventListener("click", async () => {
    form.hidden = false;
    button.hidden = true;
    button.setAttribute("aria-expanded", "true");
    const select = field(form, "set");
    try {
      const known = await folderSets();
      select.replaceChildren(
        h("option", { value: "" }, gettext("From feedback (made if there is none)")),
        ...known.filter((set) => set.name !== "From feedback").map((set) => h("option", { value: String(set.id) }, set.name)),
      );
    } catch (error) {
      field(form, "error").textContent = error.message;
    }
    fileBox.focus();
  });
  field(form, "cancel").addEventListener("click", () => {
    form.hidden = true;
    button.hidden = false;
    button.setAttribute("aria-expanded", "false");
    button.focus();
  });
  field(form, "no-file").addEventListener("change", (event) => {
    fileBox.disabled = event.target.checked;
  });
  let timer = null;
  fileBox.addEventListener("input", () => {
    clearTimeout(timer);
    const typed = fileBox.value.trim().split("/").pop();
    timer = setTimeout(() => searchFiles(choices, typed, rated.cited_files), SEARCH_DELAY_MS);
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const error = field(form, "error");
    error.textContent = "";
    const noFile = field(form, "no-file").checked;
    const path = fileBox.value.trim();
    if (!noFile && !path) {
      error.textContent = gettext("Choose the file that answers it, or say that none does.");
      fileBox.focus();
      return;
    }
    const body = { expected_file: noFile ? "" : path };
    const fact = field(form, "fact").value.trim();
    if (fact) body.expected_facts = [fact];
    const setId = field(form, "set").value;
    if (setId) body.set_id = Number(setId);
    let added;
    try {
      added = await api(`/api/messages/${rated.message_id}/evaluation-question`, { method: "POST", body });
    } catch (failure) {
      error.textContent = failure.message;
      return;
    }
    sets = null; // a set may have been made
    form.hidden = true;
    rated.in_sets = [{ id: added.set_id, name: added.set_name }];
    showSets(item, rated.in_sets);
    const line = field(item, "sets");
    line.prepend(interpolate(gettext("Added as question %(position)s. "), { position: added.position }));
    line.tabIndex = -1;
    line.focus();
  });
}

async function searchFiles(choices, name, cited) {
  if (!name) {
    showFiles(choices, cited);
    return;
  }
  try {
    const found = results(await api(`/api/folders/${folderId}/files?name=${encodeURIComponent(name)}&limit=${FILES_SHOWN}`));
    showFiles(choices, [...cited.filter((path) => path.includes(name)), ...found.map((file) => file.path)]);
  } catch {
    // the cited files stay offered; the path can still be typed in full
  }
}

function showFiles(choices, paths) {
  choices.replaceChildren(...[...new Set(paths)].map((path) => h("option", { value: path })));
}

filters.addEventListener("change", () => load());
filters.addEventListener("submit", (event) => {
  event.preventDefault();
  load();
});
more.addEventListener("click", () => load({ append: true }));
load();
