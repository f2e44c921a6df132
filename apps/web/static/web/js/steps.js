// An agent's tool steps, one expandable item each, updated as their events arrive.
import { citationHref } from "./citations.js";
import { clone, field, h } from "./dom.js";
import { duration } from "./format.js";
import { gettext, interpolate } from "./i18n.js";
import { showDetail } from "./step-detail.js";

export class StepList {
  constructor(list) {
    this.list = list;
    this.byKey = new Map();
  }

  call(data) {
    const step = this.find(data) ?? this.add(data);
    step.dataset.state = "running";
    fill(step, data);
  }

  result(data) {
    const step = this.find(data) ?? this.add(data);
    step.dataset.state = data.status === "error" ? "error" : (data.status ?? "complete");
    fill(step, data);
  }

  // The steps an answer kept, rendered as their `tool_result` events were.
  replace(steps) {
    this.byKey.clear();
    this.list.replaceChildren();
    for (const step of steps) this.result(step);
  }

  add(data) {
    const step = clone("step-item");
    const key = stepKey(data);
    if (key) this.byKey.set(key, step);
    step.dataset.tool = data.tool_name ?? "";
    this.list.append(step);
    this.list.hidden = false;
    return step;
  }

  // Events carry a call id when the runner has one; otherwise a result belongs to the latest
  // running step of the same tool.
  find(data) {
    const key = stepKey(data);
    if (key && this.byKey.has(key)) return this.byKey.get(key);
    const running = [...this.list.children].filter(
      (step) => step.dataset.state === "running" && step.dataset.tool === (data.tool_name ?? ""),
    );
    return running.at(-1) ?? null;
  }
}

function stepKey(data) {
  return data.call_id ?? data.tool_call_id ?? data.id ?? null;
}

function fill(step, data) {
  field(step, "name").textContent = data.tool_name ?? gettext("tool");
  if (data.tool_input !== undefined) field(step, "input").textContent = pretty(data.tool_input);
  field(step, "brief").textContent = brief(data.tool_input, data.tool_output);
  if (data.reasoning) {
    field(step, "reasoning").textContent = data.reasoning;
    field(step, "reasoning").hidden = false;
  }
  if (data.tool_output !== undefined) field(step, "output").textContent = pretty(data.tool_output);
  if (data.sources?.length) showSources(step, data.sources);
  else if (data.error) field(step, "output").textContent = data.error;
  else if (step.dataset.state === "running") field(step, "output").textContent = gettext("Running…");
  if (data.tool_output_data !== undefined) showDetail(step, data.tool_output_data);
  const state = step.dataset.state;
  field(step, "duration").textContent =
    state === "running"
      ? gettext("running…")
      : state === "error"
        ? interpolate(gettext("failed %(time)s"), { time: duration(data.duration_ms) })
        : duration(data.duration_ms);
}

// What a step was about, at a glance: the query it searched; for a step whose input is only ids
// (reading document 35), its output summary says more ("home-policy.pdf: 2 blocks").
function brief(input, output) {
  const query = input?.query ?? input?.question;
  if (typeof query === "string") return `“${query}”`;
  if (typeof output === "string") return output;
  return Object.values(input ?? {})
    .filter((value) => typeof value === "string" || typeof value === "number")
    .join(", ");
}

// The passages a step found, each opening its document page at the passage.
function showSources(step, sources) {
  const links = sources.map((source) => {
    const label = [source.file_name, source.location].filter(Boolean).join(" · ");
    return h("li", {}, h("a", { href: citationHref(source) }, `[${source.n}] ${label}`));
  });
  const list =
    step.querySelector(".step-sources") ?? h("ul", { class: "step-sources", "aria-label": gettext("Passages found") });
  list.replaceChildren(...links);
  field(step, "output").after(list);
}

function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}
