// Organize settings over GET/PUT /api/settings/organization: suggestions, their threshold,
// automatic moves and theirs, and the folders moves may or may not go into (one per line).
import { api } from "./api.js";
import { gettext, interpolate } from "./i18n.js";

const URL = "/api/settings/organization";
const form = document.getElementById("organize-form");
const loading = document.getElementById("organize-loading");
const errorBox = document.getElementById("organize-error");
const doneBox = document.getElementById("organize-done");
const button = form.querySelector('button[type="submit"]');

function lines(text) {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

function show(settings) {
  form.elements.auto_suggest.checked = settings.auto_suggest;
  form.elements.suggest_threshold.value = settings.suggest_threshold;
  form.elements.auto_move.checked = settings.auto_move;
  form.elements.auto_move_threshold.value = settings.auto_move_threshold;
  form.elements.include_folders.value = settings.include_folders.join("\n");
  form.elements.exclude_folders.value = settings.exclude_folders.join("\n");
}

function number(name) {
  // An empty or unreadable box is sent as it is: the API says what it expects.
  const text = form.elements[name].value.trim();
  const value = Number(text);
  return text === "" || Number.isNaN(value) ? text : value;
}

async function load() {
  button.disabled = true;
  try {
    show(await api(URL));
    loading.textContent = "";
    loading.hidden = true;
    button.disabled = false;
  } catch (error) {
    loading.textContent = interpolate(gettext("Could not load your settings: %(reason)s"), { reason: error.message });
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  errorBox.textContent = "";
  doneBox.textContent = "";
  button.disabled = true;
  const body = {
    auto_suggest: form.elements.auto_suggest.checked,
    suggest_threshold: number("suggest_threshold"),
    auto_move: form.elements.auto_move.checked,
    auto_move_threshold: number("auto_move_threshold"),
    include_folders: lines(form.elements.include_folders.value),
    exclude_folders: lines(form.elements.exclude_folders.value),
  };
  try {
    show(await api(URL, { method: "PUT", body }));
    doneBox.textContent = gettext("Saved.");
  } catch (error) {
    errorBox.textContent = error.message;
  } finally {
    button.disabled = false;
  }
});

load();
