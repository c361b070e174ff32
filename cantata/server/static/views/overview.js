// Overview: each instance's load (live) and each pipeline's DAG.
import { api } from "../api.js";
import { drawDag } from "../dag.js";
import { el, fmt, kv, put, svg } from "../dom.js";
import { every } from "../lifecycle.js";

// A breaker that is not closed: its calls fail fast (open) or one probes (half-open).
function circuitBadge(circuit) {
  if (!circuit || circuit.state === "closed") return null;
  const text = circuit.state === "open" ? "failing fast" : "probing";
  return el("span", { class: `badge circuit-${circuit.state}`, title: circuit.reason || "" }, text);
}

export async function overview(view) {
  const [pipelines, instances] = await Promise.all([api("/api/pipelines"), api("/api/instances")]);
  const history = {};
  const cards = el("div", { class: "grid" });
  function drawInstances(rows) {
    put(cards, ...rows.map((inst) => {
      const h = (history[inst.name] ||= []);
      h.push({ q: inst.queued_now, r: inst.running_now });
      if (h.length > 60) h.shift();
      const max = Math.max(1, ...h.map((p) => Math.max(p.q, p.r)));
      const line = (k) => h.map((p, i) => `${i === 0 ? "M" : "L"}${(i * 300) / 59},${58 - (p[k] / max) * 54}`).join(" ");
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
        svg("svg", { class: "spark", viewBox: "0 0 300 60", preserveAspectRatio: "none" },
          svg("path", { class: "q", d: line("q") }), svg("path", { class: "r", d: line("r") })),
        el("div", { class: "legend muted" }, el("span", {}, "— queued (orange)"), el("span", {}, "— running (blue)")));
    }));
  }
  const health = {};
  let polls = 0;
  drawInstances(instances);
  every(2000, async () => {
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
