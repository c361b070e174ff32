// A placement plan for a pipeline on some hardware, with its launch commands.
import { api } from "../api.js";
import { el, fmt, kv, put } from "../dom.js";

const round = (s) => (s === null || s === undefined ? "–" : Number(s).toFixed(2));  // in a column headed (s)

function table(head, rows, id = null) {
  return el("table", { id }, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((c) => el("td", {}, c ?? "–"))))));
}

export async function plan(view) {
  const [pipelines, hardware] = await Promise.all([api("/api/pipelines"), api("/api/hardware")]);
  const out = el("div");
  async function submit(e) {
    e.preventDefault();
    put(out, el("p", { class: "muted" }, "Planning…"));
    try {
      const result = await api("/api/plan", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ pipeline: e.target.pipeline.value, hardware: e.target.hardware.value }) });
      const p = result.plan;
      const roles = Object.fromEntries(p.roles.map((r) => [r.name, r]));
      put(out,
        el("h3", {}, `${p.pipeline} on ${p.hardware_description}`),
        el("div", { class: "grid" }, ...p.gpus.map((g) => el("div", { class: "panel" }, el("b", {}, `${g.gpu} ${g.label}`),
          el("div", { class: "bar", title: `${g.used_gb} of ${g.memory_gb} GB` }, el("div", { style: `width:${Math.min(100, (100 * g.used_gb) / g.memory_gb)}%` })),
          el("span", { class: "muted" }, `${g.used_gb} / ${g.memory_gb} GB · ${g.instances.join(", ")}`)))),
        el("h3", {}, "Instances"),
        table(["instance", "model", "roles", "GPUs", "memory (GB)", "context (tokens)", "decode (tokens/s)"],
          p.instances.map((i) => [i.name, `${i.model} (${i.quantization_label || i.quantization})`, i.roles.join(", "),
            i.gpus.join(", "), i.memory_gb, i.context, i.decode_tokens_per_s])),
        el("h3", {}, "Predicted times"),
        kv(`early reply (${p.timing.early_agent || "none"})`, fmt(p.timing.early_s),
          `merged reply (${p.timing.final_agent || "none"})`, fmt(p.timing.final_s)),
        table(["role", "runs on", "model", "needs", "prompt (tokens)", "output (tokens)", "starts (s)", "ends (s)", "takes (s)"],
          (p.timing.agents || []).map((a) => {
            const r = roles[a.name] || {};
            return [a.name, a.instance || "function", r.model || "–", r.need || "–", r.prompt_tokens ?? "–", r.output_tokens ?? "–",
              round(a.start_s), round(a.end_s), round(a.end_s - a.start_s)];
          }), "plan-times"),
        p.notes.length ? el("p", { class: "muted" }, p.notes.join(" ")) : null,
        el("h3", {}, "Launch commands"), el("pre", {}, result.launch),
        el("h3", {}, "Instances config"), el("pre", {}, result.instances_yaml));
    } catch (error) {
      put(out, el("p", { class: "status-failed" }, error.message));
    }
  }
  put(view, el("h2", {}, "Plan"),
    el("form", { class: "panel", id: "plan-form", onsubmit: submit },
      "Pipeline ", el("select", { name: "pipeline" }, ...pipelines.map((p) => el("option", { value: p.name }, p.name))), " ",
      "Hardware ", el("select", { name: "hardware" }, ...hardware.map((h) => el("option", { value: h }, h))), " ",
      el("button", { type: "submit" }, "Plan")),
    out);
}
