// Overview: each instance's load (live) and each pipeline's DAG.
import { api } from "../api.js";
import { drawDag } from "../dag.js";
import { el, fmt, kv, put, svg } from "../dom.js";
import { every } from "../lifecycle.js";

const POLL_S = 2;
const POINTS = 60;  // the chart spans POINTS x POLL_S seconds

// A breaker that is not closed: its calls fail fast (open) or one probes (half-open).
function circuitBadge(circuit) {
  if (!circuit || circuit.state === "closed") return null;
  const text = circuit.state === "open" ? "failing fast" : "probing";
  return el("span", { class: `badge circuit-${circuit.state}`, title: circuit.reason || "" }, text);
}

export async function overview(view) {
  const [pipelines, instances, recent] = await Promise.all([api("/api/pipelines"), api("/api/instances"),
    api(`/api/instances/history?seconds=${POINTS * POLL_S}&points=${POINTS}`)]);
  // The chart starts from the server's recent history (each step's peak) and goes on with each
  // poll's count, both from the event log (the caller's own calls, or everyone's for an admin).
  const history = Object.fromEntries(recent.map((h) => [h.name, h.points.map((p) => ({ q: p.queued, r: p.running }))]));
  const cards = el("div", { class: "grid" });
  function drawInstances(rows, sample = true) {  // at load, the history's last point is already now
    put(cards, ...rows.map((inst) => {
      const h = (history[inst.name] ||= []);
      if (sample || !h.length) h.push({ q: inst.live?.queued ?? 0, r: inst.live?.running ?? 0 });
      if (h.length > POINTS) h.shift();
      const max = Math.max(1, ...h.map((p) => Math.max(p.q, p.r)));
      const line = (k) => h.map((p, i) => `${i === 0 ? "M" : "L"}${(i * 300) / (POINTS - 1)},${58 - (p[k] / max) * 54}`).join(" ");
      const live = inst.live || {};
      return el("div", { class: "panel", "data-instance": inst.name },
        el("h3", {}, `${inst.name} `, el("span", { class: "muted" }, `${inst.backend}${inst.model ? " · " + inst.model : ""}`),
          circuitBadge(inst.circuit)),
        kv(
          "queued now", el("b", {}, inst.queued_now), "running now", el("b", {}, `${inst.running_now} / ${inst.max_concurrency}`),
          "tokens/s", live.tokens_per_s ?? "–", "first token", live.first_token_s != null ? fmt(live.first_token_s) : "–",
          "cache reuse", live.cached_share != null ? `${Math.round(live.cached_share * 100)} %` : "–",
          "calls (1 h)", `${live.finished ?? 0} done, ${live.failed ?? 0} failed`,
          "serves", inst.serves.join(", "),
          "health", !inst.health ? "checking…" : inst.health.reachable === null ? "not used yet"
            : inst.health.reachable ? "ok" : `unreachable: ${inst.health.error}`,
          ...(inst.server ? ["server", `${inst.server.requests_running} running, ${inst.server.requests_waiting} waiting`,
            "KV cache", inst.server.kv_cache_usage ?? "–", "prefix hits", inst.server.prefix_cache_hit_rate ?? "–"] : [])),
        svg("svg", { class: "spark", viewBox: "0 0 300 60", preserveAspectRatio: "none", role: "img",
          "aria-label": `agents queued and running over the last ${POINTS * POLL_S} s, at most ${max}`,
          "data-points": h.length, "data-max": max },
          svg("path", { class: "q", d: line("q") }), svg("path", { class: "r", d: line("r") })),
        el("div", { class: "legend muted" }, el("span", {}, el("i", { class: "swatch q" }), "queued"),
          el("span", {}, el("i", { class: "swatch r" }), "running"),
          el("span", {}, `last ${POINTS * POLL_S / 60} min · at most ${max}`)));
    }));
  }
  const health = {};
  let polls = 0;
  drawInstances(instances, false);
  every(POLL_S * 1000, async () => {
    try {
      const check = polls++ % 5 === 0;  // health and server metrics every 10 s, load every 2 s
      const rows = await api(`/api/instances${check ? "?check=true" : ""}`);
      for (const r of rows) if (check) health[r.name] = { health: r.health, server: r.server };
      drawInstances(rows.map((r) => ({ ...r, ...(health[r.name] || {}) })));
    } catch (e) { /* next tick */ }
  });
  put(view, 
    el("h2", {}, "Overview"),
    el("h3", {}, "Instances (live)"), cards,
    el("h3", {}, "Pipelines"),
    ...pipelines.map((p) => el("div", { class: "panel", "data-pipeline": p.name },
      el("h3", {}, p.name, " ", el("span", { class: "muted" }, p.description)),
      el("p", { class: "muted" }, "Critical path: ", p.critical_path.join(" → ")),
      drawDag(p))));
}
