// A folder's Evaluate page: its evaluation sets (GET /api/folders/{id}/evaluations), one set's runs
// with their metrics, a trend of hit@5, MRR and facts found over the runs, each run's answers, and
// for editors a form to make a set (evaluate-create.js: written or generated), Run, nightly and delete.
// A run's progress comes live from the folder's stream (`evaluation.progress`, `.finished`).
import { api, results } from "./api.js";
import { clone, field, h } from "./dom.js";
import { wireCreateForm } from "./evaluate-create.js";
import { closeOnLeave, followFolder } from "./folder-stream.js";
import { dateTime, duration } from "./format.js";
import { formatNumber, gettext, interpolate, ngettext } from "./i18n.js";

const SETS_SHOWN = 200;
// The trend shows the latest done runs, oldest on the left.
const TREND_RUNS = 30;
const CHART = { width: 600, height: 200, left: 36, right: 12, top: 12, bottom: 24 };
const SERIES = [
  { key: "hit_at_5", label: "hit@5", dash: "" },
  { key: "mrr", label: "MRR", dash: "8 5" },
  { key: "facts_found", label: gettext("facts found"), dash: "2 4" },
];
const METRIC_NAMES = {
  hit_at_5: "hit@5",
  mrr: "MRR",
  facts_found: gettext("facts found"),
  citation_precision: gettext("citation precision"),
};
const SVG = "http://www.w3.org/2000/svg";

const root = document.getElementById("folder-evaluate");
const folderId = root.dataset.folderId;
const canEdit = root.dataset.canEdit === "true";
const setsStatus = document.getElementById("sets-status");
const setList = document.getElementById("set-list");
const detail = document.getElementById("set-detail");
const progress = document.getElementById("run-progress");
const runError = document.getElementById("run-error");
let selected = null; // the set shown, as GET /api/evaluations/{id} answers
let outcome = ""; // how the run this page started or followed ended, said until the next one starts

// --- Sets -----------------------------------------------------------------------------------

async function loadSets() {
  let sets;
  try {
    sets = results(await api(`/api/folders/${folderId}/evaluations?limit=${SETS_SHOWN}`));
  } catch (error) {
    setsStatus.textContent = interpolate(gettext("The sets could not be loaded: %(reason)s"), { reason: error.message });
    return [];
  }
  setsStatus.textContent = sets.length
    ? ""
    : canEdit
      ? gettext("No evaluation set yet: make one below.")
      : gettext("No evaluation set yet.");
  setsStatus.hidden = sets.length > 0;
  setList.replaceChildren(...sets.map(setItem));
  return sets;
}

function setItem(set) {
  const run = set.last_run;
  const facts = [ngettext("%(count)s question", "%(count)s questions", set.question_count)];
  if (run?.status === "done") facts.push(`hit@5 ${share(run.metrics.hit_at_5)}`);
  else if (run) facts.push(statusText(run.status));
  if (run?.regression.flagged) facts.push(gettext("Regressed"));
  const button = h(
    "button",
    { type: "button", class: "set-choice", "aria-current": selected?.id === set.id ? "true" : "false" },
    h("span", { class: "set-name" }, set.name),
    h("span", { class: "set-facts" }, interpolate(facts.join(" · "), { count: set.question_count })),
  );
  button.addEventListener("click", () => showSet(set.id));
  return h("li", {}, button);
}

async function showSet(setId) {
  if (selected?.id !== setId) outcome = "";
  try {
    selected = await api(`/api/evaluations/${setId}`);
  } catch (error) {
    setsStatus.hidden = false;
    setsStatus.textContent = interpolate(gettext("The set could not be loaded: %(reason)s"), { reason: error.message });
    return;
  }
  const url = new URL(window.location.href);
  url.searchParams.set("set", String(selected.id));
  history.replaceState(null, "", url);
  for (const choice of setList.querySelectorAll(".set-choice")) choice.setAttribute("aria-current", "false");
  renderSet();
  await loadSets();
}

function renderSet() {
  detail.hidden = false;
  document.getElementById("set-title").textContent = selected.name;
  const summary = [ngettext("%(count)s question", "%(count)s questions", selected.question_count)];
  if (selected.created_by) summary.push(gettext("made by %(name)s"));
  summary.push(selected.nightly ? gettext("runs every night") : gettext("runs when started"));
  summary.push(gettext("flagged past a drop of %(margin)s"));
  document.getElementById("set-summary").textContent = interpolate(summary.join(" · "), {
    count: selected.question_count,
    name: selected.created_by ?? "",
    margin: share(selected.regression_margin),
  });
  const nightly = document.getElementById("set-nightly");
  if (nightly) nightly.checked = selected.nightly;
  renderProgress(selected.runs[0]);
  renderRegression(selected.runs.find((run) => run.status === "done"));
  renderRuns(selected.runs);
  renderTrend(selected.runs);
  renderQuestions(selected.questions);
}

function renderQuestions(questions) {
  document.getElementById("questions-title").textContent = interpolate(
    ngettext("The %(count)s question", "The %(count)s questions", questions.length),
    { count: questions.length },
  );
  document.getElementById("questions").replaceChildren(
    ...questions.map((question) =>
      h(
        "li",
        {},
        question.question,
        h("span", { class: "muted question-expects" }, expectation(question)),
      ),
    ),
  );
}

function expectation(question) {
  const parts = [];
  parts.push(
    question.expected_files.length
      ? interpolate(gettext("cites %(files)s"), { files: question.expected_files.join(", ") })
      : gettext("the folder cannot answer it"),
  );
  if (question.expected_facts.length) {
    parts.push(interpolate(gettext("states %(facts)s"), { facts: question.expected_facts.map((fact) => `“${fact}”`).join(", ") }));
  }
  return ` — ${parts.join("; ")}`;
}

// --- Runs -----------------------------------------------------------------------------------

function share(value) {
  return value === null || value === undefined ? "–" : formatNumber(value, { style: "percent", maximumFractionDigits: 0 });
}

function decimal(value) {
  return value === null || value === undefined ? "–" : formatNumber(value, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

function statusText(status) {
  return { queued: gettext("Queued"), running: gettext("Running"), done: gettext("Done"), failed: gettext("Failed") }[status] ?? status;
}

// "Regressed: hit@5 100% → 75%, MRR 1.00 → 0.75": in words, so the flag never rests on colour alone.
function regressionText(run) {
  const dropped = run.regression.dropped;
  const drops = Object.keys(METRIC_NAMES)
    .filter((name) => name in dropped)
    .map((name) => {
      const shown = name === "mrr" ? decimal : share;
      return `${METRIC_NAMES[name]} ${shown(dropped[name].previous)} → ${shown(dropped[name].now)}`;
    });
  return interpolate(gettext("Regressed: %(drops)s"), { drops: drops.join(", ") });
}

function renderRuns(runs) {
  document.getElementById("runs-empty").hidden = runs.length > 0;
  document.getElementById("runs-table").hidden = runs.length === 0;
  document.getElementById("runs-body").replaceChildren(...runs.flatMap(runRows));
}

// The run's row of metrics, and under a flagged or failed run a row saying why, in words.
function runRows(run) {
  const row = clone("run-row");
  const when = field(row, "when");
  when.dateTime = run.created_at;
  when.textContent = dateTime(run.created_at);
  field(row, "mode").textContent = `${run.mode === "agent" ? gettext("agent") : gettext("standard")}${run.model ? ` · ${run.model}` : ""}`;
  const status = field(row, "status");
  status.dataset.status = run.status === "done" ? "ready" : run.status === "failed" ? "error" : "indexing";
  status.textContent = statusText(run.status);
  const metrics = run.metrics;
  for (const key of ["hit_at_1", "hit_at_5", "citation_precision", "facts_found", "answered_share"]) {
    field(row, key).textContent = share(metrics[key]);
  }
  field(row, "mrr").textContent = decimal(metrics.mrr);
  field(row, "latency").textContent =
    metrics.latency_p50 === null ? "–" : `${duration(metrics.latency_p50)} / ${duration(metrics.latency_p95)}`;
  field(row, "tokens").textContent = metrics.tokens === null ? "–" : formatNumber(metrics.tokens);
  field(row, "cost").textContent =
    metrics.cost === null ? "–" : formatNumber(metrics.cost, { style: "currency", currency: "USD", maximumFractionDigits: 4 });
  field(row, "regression").textContent = regressionState(run);
  row.classList.toggle("regressed", run.regression.flagged);
  const show = field(row, "show");
  show.disabled = run.status !== "done" && run.status !== "failed";
  show.title = gettext("Show this run's answers");
  show.addEventListener("click", () => showResults(run.id));
  if (!run.regression.flagged && run.status !== "failed") return [row];
  const why = clone("run-detail-row");
  why.classList.toggle("regressed", run.regression.flagged);
  field(why, "detail").textContent = run.status === "failed" ? run.error : regressionText(run);
  return [row, why];
}

function regressionState(run) {
  if (run.status === "failed") return gettext("Failed");
  if (run.status !== "done") return "";
  if (run.regression.flagged) return gettext("Regressed");
  return run.regression.compared_with ? gettext("No drop") : gettext("First run");
}

function renderRegression(latestDone) {
  const notice = document.getElementById("regression-notice");
  notice.hidden = !latestDone?.regression.flagged;
  if (latestDone?.regression.flagged) {
    notice.textContent = interpolate(gettext("The latest run is worse than the one before. %(drops)s"), {
      drops: regressionText(latestDone),
    });
  }
}

function renderProgress(latest) {
  if (latest && (latest.status === "queued" || latest.status === "running")) {
    progress.textContent =
      latest.status === "queued"
        ? gettext("Queued: waiting for a worker…")
        : interpolate(gettext("Answering: %(done)s of %(total)s questions"), latest.progress);
  } else {
    progress.textContent = outcome;
  }
  const button = document.getElementById("run-button");
  if (button) button.disabled = Boolean(latest && (latest.status === "queued" || latest.status === "running"));
}

async function showResults(runId) {
  const section = document.getElementById("run-results");
  let run;
  try {
    run = await api(`/api/evaluation-runs/${runId}`);
  } catch (error) {
    runError.textContent = error.message;
    return;
  }
  section.hidden = false;
  document.getElementById("results-title").textContent = interpolate(gettext("Answers of the run of %(when)s"), {
    when: dateTime(run.created_at),
  });
  const configuration = run.configuration;
  const answerer =
    configuration.provider === configuration.model ? configuration.provider : `${configuration.provider} · ${configuration.model}`;
  document.getElementById("results-configuration").textContent = configuration.mode
    ? interpolate(gettext("Answered by %(answerer)s · %(mode)s mode · %(files)s files indexed"), {
        answerer,
        mode: { standard: gettext("standard"), agent: gettext("agent") }[configuration.mode] ?? configuration.mode,
        files: configuration.search?.files_indexed ?? "?",
      })
    : "";
  document.getElementById("results-list").replaceChildren(...run.results.map(resultItem));
  section.scrollIntoView({ block: "start" });
}

function resultItem(result) {
  const item = clone("result-item");
  field(item, "question").textContent = result.question;
  field(item, "answer").textContent = result.error || result.answer;
  field(item, "cited").textContent = result.cited_files.join(", ") || gettext("nothing");
  field(item, "expected").textContent = result.expected_files.join(", ") || gettext("nothing (unanswerable)");
  field(item, "rank").textContent = result.hit_rank
    ? interpolate(gettext("cited file %(rank)s"), { rank: result.hit_rank })
    : gettext("not cited");
  field(item, "facts").textContent = result.expected_facts.length
    ? interpolate(gettext("%(found)s of %(total)s stated"), {
        found: result.facts_found.length,
        total: result.expected_facts.length,
      })
    : "–";
  field(item, "time").textContent = duration(result.duration_ms);
  item.classList.toggle("missed", !result.hit_rank && result.expected_files.length > 0);
  return item;
}

// --- Trend ----------------------------------------------------------------------------------

function renderTrend(runs) {
  const chart = document.getElementById("trend-chart");
  const done = runs.filter((run) => run.status === "done").slice(0, TREND_RUNS).reverse();
  const text = document.getElementById("trend-text");
  chart.replaceChildren(svg("title", {}, gettext("hit@5, MRR and facts found over the runs")));
  const x = (index) =>
    CHART.left + (done.length === 1 ? 0 : (index * (CHART.width - CHART.left - CHART.right)) / (done.length - 1));
  const y = (value) => CHART.top + (1 - value) * (CHART.height - CHART.top - CHART.bottom);
  for (const tick of [0, 0.5, 1]) {
    chart.append(
      svg("line", { class: "trend-grid", x1: CHART.left, x2: CHART.width - CHART.right, y1: y(tick), y2: y(tick) }),
      svg("text", { class: "trend-axis", x: CHART.left - 6, y: y(tick) + 4, "text-anchor": "end" }, share(tick)),
    );
  }
  for (const series of SERIES) {
    const points = done
      .map((run, index) => [index, run.metrics[series.key]])
      .filter(([, value]) => value !== null && value !== undefined)
      .map(([index, value]) => `${x(index).toFixed(1)},${y(value).toFixed(1)}`);
    if (!points.length) continue;
    chart.append(
      svg("polyline", {
        class: "trend-line",
        "data-series": series.key,
        points: points.join(" "),
        "stroke-dasharray": series.dash,
      }),
      ...points.map((point) => {
        const [cx, cy] = point.split(",");
        return svg("circle", { class: "trend-point", "data-series": series.key, cx, cy, r: 3 });
      }),
    );
  }
  const latest = done.at(-1);
  text.textContent = !latest
    ? gettext("No finished run yet.")
    : interpolate(
        ngettext(
          "%(count)s finished run. Latest: hit@5 %(hit)s, MRR %(mrr)s, facts found %(facts)s.",
          "%(count)s finished runs, oldest first. Latest: hit@5 %(hit)s, MRR %(mrr)s, facts found %(facts)s.",
          done.length,
        ),
        {
          count: done.length,
          hit: share(latest.metrics.hit_at_5),
          mrr: decimal(latest.metrics.mrr),
          facts: share(latest.metrics.facts_found),
        },
      );
}

function svg(tag, attributes, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== "") element.setAttribute(name, String(value));
  }
  if (text !== undefined) element.textContent = text;
  return element;
}

// --- Editors' controls ----------------------------------------------------------------------

function wireEditing() {
  wireCreateForm({ folderId, onCreated: showSet });

  document.getElementById("run-form")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!selected) return;
    runError.textContent = "";
    outcome = "";
    const form = event.currentTarget;
    const body = { mode: form.elements.mode.value };
    if (form.elements.model?.value) body.model = form.elements.model.value;
    try {
      await api(`/api/evaluations/${selected.id}/runs`, { method: "POST", body });
    } catch (failure) {
      runError.textContent = failure.message;
      return;
    }
    await refreshSelected();
  });

  document.getElementById("set-nightly")?.addEventListener("change", async (event) => {
    runError.textContent = "";
    try {
      selected = await api(`/api/evaluations/${selected.id}`, { method: "PATCH", body: { nightly: event.target.checked } });
      renderSet();
    } catch (failure) {
      runError.textContent = failure.message;
      event.target.checked = !event.target.checked;
    }
  });

  document.getElementById("set-delete")?.addEventListener("click", async () => {
    if (!window.confirm(interpolate(gettext("Delete the set “%(name)s” and all its runs?"), { name: selected.name }))) return;
    try {
      await api(`/api/evaluations/${selected.id}`, { method: "DELETE" });
    } catch (failure) {
      runError.textContent = failure.message;
      return;
    }
    selected = null;
    detail.hidden = true;
    const url = new URL(window.location.href);
    url.searchParams.delete("set");
    history.replaceState(null, "", url);
    await loadSets();
  });
}

// --- Live updates ---------------------------------------------------------------------------

async function refreshSelected() {
  if (selected) await showSet(selected.id);
  else await loadSets();
}

function follow(after) {
  const stream = followFolder(
    folderId,
    {
      "evaluation.progress": (event) => {
        if (selected?.id !== event.set_id) return;
        progress.textContent = interpolate(gettext("Answering: %(done)s of %(total)s questions"), event);
      },
      "evaluation.finished": (event) => {
        if (selected?.id === event.set_id) {
          outcome =
            event.status === "done"
              ? event.regressed
                ? gettext("Run finished: worse than the run before.")
                : gettext("Run finished.")
              : interpolate(gettext("The run failed: %(reason)s"), { reason: event.error });
        }
        refreshSelected();
      },
    },
    { poll: () => selected && ["queued", "running"].includes(selected.runs[0]?.status) && refreshSelected(), after },
  );
  closeOnLeave(() => [stream]);
}

async function start() {
  if (canEdit) wireEditing(); // before anything is shown: no click may reach a form unhandled
  let after = "0";
  try {
    after = (await api(`/api/folders/${folderId}`)).events_after;
  } catch {
    // the stream then replays the folder's recent events: a few needless reloads at worst
  }
  const sets = await loadSets();
  const wanted = Number(new URLSearchParams(window.location.search).get("set"));
  const first = sets.find((set) => set.id === wanted) ?? sets[0];
  if (first) await showSet(first.id);
  follow(after);
}

start();
