// An agent's output as a person reads it: each field a labelled row, a number on a bounded
// scale shown with it ("4 / 5", from the output's schema: the API's `scales`), lists inline
// or one item a box; the JSON itself one click away.
import { el, json } from "./dom.js";

const MAX_DEPTH = 5;  // deeper than outputs go; past it, JSON

function label(key) { return key.replace(/_/g, " "); }

function number(value) { return Number.isInteger(value) ? String(value) : String(+value.toFixed(3)); }

function scaled(value, [low, high]) {
  return el("span", { class: "score", title: `on a scale from ${low} to ${high}` },
    el("b", {}, number(value)), ` / ${high}`,
    el("meter", { min: low, max: high, value, "aria-label": `${number(value)} on a scale from ${low} to ${high}` }),
    low !== 0 && low !== 1 ? el("span", { class: "muted" }, ` (from ${low})`) : null);
}

function isScalar(value) { return value === null || typeof value !== "object"; }

export function fields(value, scales = {}, path = "", depth = 0) {
  if (value === null || value === undefined) return el("span", { class: "muted" }, "–");
  if (typeof value === "boolean") return el("span", {}, value ? "yes" : "no");
  if (typeof value === "number") return scales[path] ? scaled(value, scales[path]) : el("span", {}, number(value));
  if (typeof value === "string") return value ? el("span", { class: "text" }, value) : el("span", { class: "muted" }, "–");
  if (depth >= MAX_DEPTH) return el("code", {}, JSON.stringify(value));
  const inner = `${path}[]`;
  if (Array.isArray(value)) {
    if (!value.length) return el("span", { class: "muted" }, "none");
    if (value.every(isScalar) && !scales[inner]) return el("span", {}, value.map((v) => (typeof v === "number" ? number(v) : String(v))).join(", "));
    return el("div", { class: "items" }, ...value.map((v) => el("div", { class: "item" }, fields(v, scales, inner, depth + 1))));
  }
  const keys = Object.keys(value);
  if (!keys.length) return el("span", { class: "muted" }, "none");
  return el("div", { class: "kv fields" }, ...keys.flatMap((k) => {
    const at = path ? `${path}.${k}` : k;
    return [el("span", { class: "label" }, label(k)), fields(value[k], scales, at, depth + 1)];
  }));
}

export function rawJson(value) {
  return el("details", { class: "raw" }, el("summary", {}, "JSON"), el("pre", {}, json(value)));
}

// Formatted, with the JSON on a toggle.
export function output(value, scales) {
  return el("div", { class: "output" }, fields(value, scales), rawJson(value));
}

// Each pipeline's scales by agent, from /api/pipelines: {pipeline: {agent: {path: [low, high]}}}.
export function scalesByPipeline(pipelines) {
  return Object.fromEntries(pipelines.map((p) => [p.name, Object.fromEntries(p.agents.map((a) => [a.name, a.scales || {}]))]));
}
