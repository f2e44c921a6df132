// The Evaluate page's form that makes a set: a textarea of question blocks (the question, `file:`
// and `fact:` lines under it, `#` lines as notes), and Generate, which fills it with questions drawn
// from the folder's own passages (POST /api/folders/{id}/evaluations/generate) for the person to
// review, edit or delete before Create set saves them (POST /api/folders/{id}/evaluations).
import { api } from "./api.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

// The box grows to show a drawn set, up to this many lines (then it scrolls).
const BOX_ROWS_MAX = 24;

// The textarea's blocks as the API's questions: the first lines of a block are the question, `file:`
// and `fact:` lines say what answers it; `#` lines are notes; blocks are separated by empty lines.
export function parseQuestions(text) {
  const blocks = text.replace(/\r\n/g, "\n").split(/\n\s*\n/).map((block) => block.trim()).filter(Boolean);
  return blocks
    .map((block) => {
      const question = { question: "", expected_files: [], expected_facts: [] };
      for (const line of block.split("\n").map((part) => part.trim()).filter(Boolean)) {
        if (line.startsWith("#")) continue;
        const match = /^(files?|facts?)\s*:\s*(.*)$/i.exec(line);
        if (match && match[1].toLowerCase().startsWith("file")) question.expected_files.push(match[2].trim());
        else if (match) question.expected_facts.push(match[2].trim());
        else question.question = question.question ? `${question.question} ${line}` : line;
      }
      return question;
    })
    .filter((question) => question.question || question.expected_files.length || question.expected_facts.length);
}

// A generated question as a block of the textarea: a note saying where it came from, then the
// question and what answers it.
function block(question) {
  const place = [question.source.file, question.source.location.section].filter(Boolean).join(" · ");
  return [
    `# ${interpolate(gettext("from %(place)s"), { place })}`,
    question.question,
    ...question.expected_files.map((path) => `file: ${path}`),
    ...question.expected_facts.map((fact) => `fact: ${fact}`),
  ].join("\n");
}

export function wireCreateForm({ folderId, onCreated }) {
  const form = document.getElementById("create-form");
  if (!form) return;
  const error = document.getElementById("create-error");
  const status = document.getElementById("generate-status");
  const generate = document.getElementById("generate-button");

  generate.addEventListener("click", async () => {
    const count = Number(form.elements.count.value);
    error.textContent = "";
    if (!Number.isInteger(count) || count < 1 || count > 50) {
      status.textContent = gettext("Draw between 1 and 50 questions.");
      return;
    }
    const box = form.elements.questions;
    if (box.value.trim() && !window.confirm(gettext("Replace the questions in the box with generated ones?"))) return;
    generate.disabled = true;
    status.textContent = gettext("Drawing questions from the folder…");
    let drawn;
    try {
      drawn = await api(`/api/folders/${folderId}/evaluations/generate`, { method: "POST", body: { count } });
    } catch (failure) {
      status.textContent = "";
      error.textContent = failure.message;
      return;
    } finally {
      generate.disabled = false;
    }
    box.value = drawn.questions.map(block).join("\n\n");
    box.rows = Math.min(BOX_ROWS_MAX, Math.max(box.rows, box.value.split("\n").length));
    if (!form.elements.name.value.trim()) form.elements.name.value = gettext("Generated questions");
    const said = [
      interpolate(
        ngettext(
          "%(count)s question drawn (seed %(seed)s): review it below, then create the set.",
          "%(count)s questions drawn (seed %(seed)s): review them below, edit or delete blocks, then create the set.",
          drawn.questions.length,
        ),
        { count: drawn.questions.length, seed: String(drawn.seed) },
      ),
      ...drawn.notices,
    ];
    status.textContent = said.join(" ");
    box.focus();
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const questions = parseQuestions(form.elements.questions.value);
    if (!form.elements.name.value.trim() || !questions.length) {
      error.textContent = gettext("Give the set a name and at least one question.");
      return;
    }
    try {
      const created = await api(`/api/folders/${folderId}/evaluations`, {
        method: "POST",
        body: { name: form.elements.name.value, questions },
      });
      form.reset();
      status.textContent = "";
      await onCreated(created.id);
    } catch (failure) {
      error.textContent = failure.message;
    }
  });
}
