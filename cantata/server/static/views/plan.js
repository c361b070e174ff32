// A placement plan for a pipeline on some hardware, with its launch commands.
import { api } from "../api.js";
import { el, fmt, json, put } from "../dom.js";

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
      put(out, 
        el("h3", {}, `${p.pipeline} on ${p.hardware_description}`),
        el("div", { class: "grid" }, ...p.gpus.map((g) => el("div", { class: "panel" }, el("b", {}, `${g.gpu} ${g.label}`),
          el("div", { class: "bar", title: `${g.used_gb} of ${g.memory_gb} GB` }, el("div", { style: `width:${Math.min(100, (100 * g.used_gb) / g.memory_gb)}%` })),
          el("span", { class: "muted" }, `${g.used_gb} / ${g.memory_gb} GB · ${g.instances.join(", ")}`)))),
        el("h3", {}, "Instances"),
        el("table", {}, el("tr", {}, el("th", {}, "instance"), el("th", {}, "model"), el("th", {}, "roles"), el("th", {}, "GPUs"), el("th", {}, "memory"), el("th", {}, "decode tok/s")),
          ...p.instances.map((i) => el("tr", {}, el("td", {}, i.name), el("td", {}, `${i.model} (${i.quantization_label || i.quantization})`),
            el("td", {}, i.roles.join(", ")), el("td", {}, i.gpus.join(", ")), el("td", {}, `${i.memory_gb} GB`), el("td", {}, i.decode_tokens_per_s)))),
        el("h3", {}, "Predicted times"),
        el("pre", {}, json(Object.fromEntries(Object.entries(p.timing).filter(([k]) => k !== "agents")))),
        el("table", {}, ...(p.timing.agents || []).map((a) => el("tr", {}, el("td", {}, a.name), el("td", {}, a.instance || "function"),
          el("td", {}, `${fmt(a.start_s)} → ${fmt(a.end_s)}`)))),
        p.notes.length ? el("p", { class: "muted" }, p.notes.join(" ")) : null,
        el("h3", {}, "Launch commands"), el("pre", {}, result.launch),
        el("h3", {}, "Instances config"), el("pre", {}, result.instances_yaml));
    } catch (error) {
      put(out, el("p", { class: "status-failed" }, error.message));
    }
  }
  put(view, el("h2", {}, "Plan"),
    el("form", { class: "panel", onsubmit: submit },
      "Pipeline ", el("select", { name: "pipeline" }, ...pipelines.map((p) => el("option", { value: p.name }, p.name))), " ",
      "Hardware ", el("select", { name: "hardware" }, ...hardware.map((h) => el("option", { value: h }, h))), " ",
      el("button", { type: "submit" }, "Plan")),
    out);
}
