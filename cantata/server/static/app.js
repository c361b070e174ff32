// Cantata's dashboard: plain JavaScript over the JSON API and the event streams.
// Each view has its own URL (#/view/arg); every view reads /api and updates live.
"use strict";

const SEPARATOR = "\n\n---\n\n";
const view = document.getElementById("view");
let cleanup = [];  // what the current view must stop (streams, timers) when leaving

// -- helpers -------------------------------------------------------------------------------

function key() { return localStorage.getItem("cantata-key") || ""; }
function headers(extra = {}) {
  const h = { ...extra };
  if (key()) h["Authorization"] = "Bearer " + key();
  return h;
}
async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers(options.headers || {}) });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((body.error && body.error.message) || response.statusText);
  return body;
}
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined) node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
const SVGNS = "http://www.w3.org/2000/svg";
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined) node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
function put(node, ...children) {  // replaceChildren, but null means nothing (not "null")
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
}
function kv(...pairs) {  // a two-column grid: each label and value its own cell
  return el("div", { class: "kv" }, ...pairs.map((v) => (v instanceof Node ? v : el("span", {}, v ?? "–"))));
}
function fmt(s) { return s === null || s === undefined ? "–" : `${Number(s).toFixed(2)} s`; }
function json(value) { return JSON.stringify(value, null, 2); }
function showError(error) { put(view, el("div", { class: "panel status-failed" }, String(error.message || error))); }

// Server-sent events over fetch (EventSource cannot send an API key), resuming with
// Last-Event-ID after a drop, as the server's replay expects.
function subscribe(path, onEvent) {
  const controller = new AbortController();
  let lastId = null;
  let stopped = false;
  async function run() {
    while (!stopped) {
      try {
        const h = headers(lastId ? { "Last-Event-ID": lastId } : {});
        const response = await fetch(path, { headers: h, signal: controller.signal });
        if (!response.ok) return;
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;  // the server ended the stream (a turn's stream ends with it)
          buffer += decoder.decode(value, { stream: true });
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            let id = null, data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("id: ")) id = line.slice(4);
              else if (line.startsWith("data: ")) data += line.slice(6);
            }
            if (id) lastId = id;
            if (data) onEvent(JSON.parse(data));
          }
        }
      } catch (error) {
        if (stopped) return;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
  run();
  const stop = () => { stopped = true; controller.abort(); };
  cleanup.push(stop);
  return stop;
}
function every(ms, fn) {
  const t = setInterval(fn, ms);
  const stop = () => clearInterval(t);
  cleanup.push(stop);
  return stop;
}
function throttle(ms, fn) {
  let pending = null;
  return () => { if (!pending) pending = setTimeout(() => { pending = null; fn(); }, ms); };
}

// -- the DAG -------------------------------------------------------------------------------

function drawDag(pipeline) {
  const depth = {};
  for (const name of pipeline.order) {
    const agent = pipeline.agents.find((a) => a.name === name);
    depth[name] = Math.max(0, ...agent.reads.map((r) => depth[r] + 1));
  }
  const columns = {};
  for (const name of pipeline.order) (columns[depth[name]] ||= []).push(name);
  const W = 150, H = 46, GX = 60, GY = 18;
  const pos = {};
  const ncols = Object.keys(columns).length;
  const nrows = Math.max(...Object.values(columns).map((c) => c.length));
  for (const [col, names] of Object.entries(columns)) {
    names.forEach((name, i) => {
      const offset = ((nrows - names.length) * (H + GY)) / 2;
      pos[name] = { x: 10 + col * (W + GX), y: 10 + offset + i * (H + GY) };
    });
  }
  const critical = new Set(pipeline.critical_path);
  const onPath = (a, b) => critical.has(a) && critical.has(b) &&
    pipeline.critical_path.indexOf(b) === pipeline.critical_path.indexOf(a) + 1;
  const width = 20 + ncols * (W + GX) - GX, height = 20 + nrows * (H + GY) - GY;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", style: `max-width:${width}px`, role: "img",
    "aria-label": `DAG of ${pipeline.name}` },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse", orient: "auto" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "currentColor", class: "muted" }))));
  for (const [from, to] of pipeline.edges) {
    const a = pos[from], b = pos[to];
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    root.append(svg("path", { class: "edge" + (onPath(from, to) ? " critical" : ""),
      d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)" }));
  }
  for (const agent of pipeline.agents) {
    const p = pos[agent.name];
    const sub = agent.kind === "function" ? "function" : `${agent.model} → ${agent.instance || "unbound"}`;
    const tag = agent.deliver ? ` · ${agent.deliver}` : "";
    root.append(svg("g", { class: "node" + (critical.has(agent.name) ? " critical" : ""), "data-agent": agent.name },
      svg("rect", { x: p.x, y: p.y, width: W, height: H, rx: 8 }),
      svg("text", { x: p.x + 10, y: p.y + 19 }, agent.name + tag),
      svg("text", { x: p.x + 10, y: p.y + 36, class: "sub" }, sub.length > 24 ? sub.slice(0, 23) + "…" : sub)));
  }
  return root;
}

// -- views ---------------------------------------------------------------------------------

async function overview() {
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
        el("h3", {}, `${inst.name} `, el("span", { class: "muted" }, `${inst.backend}${inst.model ? " · " + inst.model : ""}`)),
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

function criticalFromTimes(turn) {
  // The chain that made the turn as long as it was: from the final agent back through
  // the input that finished last.
  const byName = Object.fromEntries(turn.agents.map((a) => [a.name, a]));
  const final = turn.final ? byName[turn.final.agent] : null;
  let current = final || turn.agents.reduce((a, b) => ((b.finished_s || 0) > (a.finished_s || 0) ? b : a), turn.agents[0]);
  const path = new Set();
  while (current) {
    path.add(current.name);
    const inputs = (current.reads || []).map((r) => byName[r]).filter(Boolean);
    current = inputs.reduce((a, b) => (!a || (b.finished_s || 0) > (a.finished_s || 0) ? b : a), null);
  }
  return path;
}

function drawGantt(turn, onPick) {
  const agents = turn.agents;
  const now = turn.status === "running" && turn.started_at ? Date.now() / 1000 - turn.started_at : 0;
  const end = Math.max(0.001, now, ...agents.map((a) => a.finished_s || a.started_s || a.queued_s || 0),
    turn.final?.at_s || 0, turn.early?.at_s || 0);
  const L = 120, R = 50, ROW = 28, W = 900;
  const x = (s) => L + (s / end) * (W - L - R);
  const height = 30 + agents.length * ROW + 10;
  const critical = criticalFromTimes(turn);
  const root = svg("svg", { viewBox: `0 0 ${W} ${height}`, width: "100%", role: "img", "aria-label": "turn timeline" });
  for (let i = 0; i <= 4; i++) {
    const s = (end * i) / 4;
    root.append(svg("line", { class: "axis", x1: x(s), x2: x(s), y1: 18, y2: height - 5 }),
      svg("text", { x: x(s) - 10, y: 12, class: "muted" }, `${s.toFixed(2)} s`));
  }
  agents.forEach((a, i) => {
    const y = 24 + i * ROW;
    const status = a.status === "pending" ? (a.started_s != null ? "running" : a.queued_s != null ? "queued" : "pending") : a.status;
    const lane = svg("g", { class: "lane-row", "data-agent": a.name, "data-status": status, onclick: () => onPick(a) },
      svg("rect", { class: "lane", x: 0, y: y - 3, width: W, height: ROW - 2, fill: "transparent" }),
      svg("text", { x: 6, y: y + 14 }, a.name));
    if (a.queued_s != null) {
      const qEnd = a.started_s ?? (status === "queued" ? now : a.finished_s) ?? a.queued_s;
      lane.append(svg("rect", { class: "bar-queued", x: x(a.queued_s), y: y + 3, height: ROW - 12,
        width: Math.max(1, x(qEnd) - x(a.queued_s)) }, svg("title", {}, `${a.name}: queued ${fmt(qEnd - a.queued_s)}`)));
    }
    if (a.started_s != null) {
      const rEnd = a.finished_s ?? now;
      lane.append(svg("rect", { class: `bar-${status}` + (critical.has(a.name) ? " bar-critical" : ""), x: x(a.started_s),
        y, height: ROW - 6, width: Math.max(2, x(rEnd) - x(a.started_s)), rx: 3 },
        svg("title", {}, `${a.name}: ${status}, ran ${fmt(rEnd - a.started_s)}`)));
    } else if (a.finished_s != null) {
      lane.append(svg("rect", { class: `bar-${status}`, x: x(a.finished_s), y, height: ROW - 6, width: 3 }));
    }
    for (const retry of a.retries || []) {
      lane.append(svg("path", { class: "retry", d: `M${x(retry.at_s)},${y - 2} l5,8 l-10,0 z` },
        svg("title", {}, `${retry.kind}: ${retry.error || ""}`)));
    }
    root.append(lane);
  });
  for (const [kind, d] of [["early", turn.early], ["final", turn.final]]) {
    if (d && d.at_s != null) {
      root.append(svg("line", { class: `mark-${kind}`, x1: x(d.at_s), x2: x(d.at_s), y1: 18, y2: height - 5 }),
        svg("text", { x: x(d.at_s) + 3, y: height - 8, class: "muted" }, kind));
    }
  }
  return root;
}

async function latestTurnId() {
  const sessions = await api("/api/sessions");
  if (!sessions.length) return null;
  const detail = await api(`/api/sessions/${sessions[0].id}`);
  const turns = detail.turn_list;
  return turns.length ? turns[turns.length - 1].turn_id : null;
}

async function timeline(turnId) {
  if (!turnId) {
    const latest = await latestTurnId();
    if (latest === null) {
      put(view, el("h2", {}, "Turn timeline"), el("div", { class: "empty" }, "No turn yet: send a message in Chat."));
      return;
    }
    location.hash = `#/turn/${latest}`;
    return;
  }
  const detail = el("div", { class: "panel", id: "agent-detail" }, el("span", { class: "muted" }, "Click an agent to see its tokens, attempts, error and output."));
  const chart = el("div", { class: "panel", id: "gantt" });
  const head = el("div");
  function pick(a) {
    put(detail, el("h3", {}, a.name, " ", el("span", { class: `status-${a.status}` }, a.status)),
      kv(
        "instance", a.instance || "–", "queued", a.queued_s != null && a.started_s != null ? fmt(a.started_s - a.queued_s) : "–",
        "ran", a.started_s != null && a.finished_s != null ? fmt(a.finished_s - a.started_s) : "–",
        "attempts", a.attempts, "tokens", `${a.prompt_tokens} prompt (${a.cached_tokens} cached) + ${a.completion_tokens} completion`,
        "retries", (a.retries || []).map((r) => `${r.kind} at ${fmt(r.at_s)}`).join(", ") || "none",
        "error", a.error || "none"),
      el("h3", {}, "Output"), el("pre", {}, json(a.output)));
  }
  async function refresh() {
    const turn = await api(`/api/turns/${turnId}`);
    const done = turn.agents.filter((a) => ["ok", "failed", "skipped"].includes(a.status)).length;
    put(head, 
      el("h2", {}, `Turn ${turn.turn} of session ${turn.session} `, el("span", { class: `status-${turn.status}`, id: "turn-status" }, turn.status)),
      el("p", {}, el("b", {}, "Message: "), turn.message),
      el("p", { class: "muted", id: "turn-progress" }, `${done} of ${turn.agents.length} agents done · `,
        el("a", { href: `#/blackboard/${turnId}` }, "blackboard")),
      el("div", { class: "legend muted" }, el("span", {}, el("i", { style: "background:var(--queued)" }), "queued"),
        el("span", {}, el("i", { style: "background:var(--ok)" }), "ran (ok)"),
        el("span", {}, el("i", { style: "background:var(--failed)" }), "failed"),
        el("span", {}, el("i", { style: "border:2px solid var(--critical)" }), "critical path"),
        el("span", {}, "▲ retry / repair"), el("span", {}, "dashed: early and final delivery")));
    put(chart, drawGantt(turn, pick));
    return turn;
  }
  put(view, head, chart, detail);
  const turn = await refresh();
  if (turn.status === "running") {
    let stopClock = null;
    const again = throttle(150, () => refresh().then((t) => {
      if (t.status !== "running" && stopClock) { stopClock(); stopClock = null; }
    }).catch(() => {}));
    subscribe(`/api/turns/${turnId}/events`, again);  // the stream ends with the turn
    stopClock = every(500, again);  // queued and running bars grow with the clock
  }
}

async function blackboard(turnId) {
  if (!turnId) {
    const latest = await latestTurnId();
    if (latest !== null) { location.hash = `#/blackboard/${latest}`; return; }
  }
  const memory = await api("/api/memory");
  const parts = [el("h2", {}, "Blackboard")];
  if (turnId) {
    const board = await api(`/api/turns/${turnId}/blackboard`);
    parts.push(el("p", {}, el("a", { href: `#/turn/${turnId}` }, `timeline of turn ${turnId}`)));
    parts.push(...board.entries.map((e) => el("div", { class: "panel", "data-entry": e.agent },
      el("h3", {}, e.agent, " ", el("span", { class: `status-${e.status}` }, e.status)),
      e.error ? el("p", { class: "status-failed" }, e.error) : null, el("pre", {}, json(e.output)))));
    parts.push(el("h3", {}, "Conflicts"), board.conflicts.length
      ? el("div", {}, ...board.conflicts.map((c) => el("pre", { class: "panel" }, json(c))))
      : el("p", { class: "muted" }, "No conflicts in this turn."));
  } else {
    parts.push(el("div", { class: "empty" }, "No turn yet."));
  }
  parts.push(el("h3", {}, `Memory of ${memory.user} across ${memory.sessions} session(s)`),
    Object.keys(memory.memory).length ? el("pre", {}, json(memory.memory)) : el("p", { class: "muted" }, "Nothing remembered yet."));
  put(view, ...parts);
}

async function sessions(arg) {
  const who = await api("/api/whoami");
  const user = arg || who.user;
  const list = await api(`/api/sessions?user=${encodeURIComponent(user)}`);
  const body = el("div");
  const picker = who.admin ? el("form", { onsubmit: (e) => { e.preventDefault(); location.hash = `#/sessions/${e.target.user.value}`; } },
    "User ", el("input", { name: "user", value: user }), " ", el("button", { type: "submit" }, "Show")) : null;
  async function showSession(id) {
    const s = await api(`/api/sessions/${id}`);
    put(body, el("h3", {}, `Session ${s.id} (${s.pipeline})`), s.summary ? el("p", { class: "muted" }, "Summary: ", s.summary) : null,
      el("table", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "message"), el("th", {}, "reply"), el("th", {}, "status"), el("th", {}, "")),
        ...s.turn_list.map((t) => el("tr", {}, el("td", {}, t.number), el("td", {}, t.message), el("td", {}, t.reply || "–"),
          el("td", { class: `status-${t.status}` }, t.status),
          el("td", {}, el("a", { href: `#/turn/${t.turn_id}` }, "timeline"), " ", el("a", { href: `#/blackboard/${t.turn_id}` }, "blackboard"))))));
  }
  async function exportAll() {
    const data = await api(`/api/memory/export?user=${encodeURIComponent(user)}`);
    const link = el("a", { href: URL.createObjectURL(new Blob([json(data)], { type: "application/json" })), download: `cantata-${user}.json` });
    link.click();
  }
  async function forget() {
    if (!confirm(`Delete everything Cantata keeps about ${user}?`)) return;
    await api(`/api/memory?user=${encodeURIComponent(user)}`, { method: "DELETE" });
    route();
  }
  put(view, el("h2", {}, `Sessions of ${user}`), picker,
    el("p", {}, el("button", { onclick: exportAll }, "Export as JSON"), " ", el("button", { class: "danger", onclick: forget }, "Delete everything")),
    list.length ? el("table", {}, el("tr", {}, el("th", {}, "session"), el("th", {}, "pipeline"), el("th", {}, "turns"), el("th", {}, "started")),
      ...list.map((s) => el("tr", {}, el("td", {}, el("a", { href: "javascript:void 0", onclick: () => showSession(s.id) }, s.id)),
        el("td", {}, s.pipeline), el("td", {}, s.turns), el("td", {}, s.created_at ? new Date(s.created_at * 1000).toLocaleString() : "–"))))
      : el("div", { class: "empty" }, "No sessions yet."),
    body);
}

async function plan() {
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

// The agent factory's tasks: one row a factory turn, redrawn on each of the user's events.
async function tasks() {
  const body = el("div");
  let after = null;  // the stream follows on from the first read; it resumes by Last-Event-ID
  function outcome(t) {
    if (t.status === "running") return "running";
    if (t.deployed) return `deployed ${t.agent} v${t.version}`;
    return t.reason ? `not deployed: ${t.reason}` : t.status;
  }
  async function refresh() {
    const board = await api("/api/tasks");
    after ??= board.after;
    put(body, board.tasks.length
      ? el("table", { id: "task-board" },
        el("tr", {}, ...["task", "request", "role", "stage", "iteration", "tests passed", "tokens", "time", "outcome"].map((h) => el("th", {}, h))),
        ...board.tasks.map((t) => el("tr", { "data-testid": "task", "data-turn": t.turn_id, "data-status": t.status },
          el("td", {}, el("a", { href: `#/turn/${t.turn_id}` }, `#${t.turn_id}`)), el("td", {}, t.request),
          el("td", { "data-field": "role" }, t.role), el("td", { "data-field": "stage" }, t.stage),
          el("td", { "data-field": "iteration" }, t.iteration || "–"), el("td", { "data-field": "tests" }, t.tests),
          el("td", { "data-field": "tokens" }, t.tokens), el("td", {}, `${t.seconds} s`),
          el("td", { "data-field": "outcome", class: t.deployed ? "status-ok" : t.status === "running" ? "" : "status-failed" }, outcome(t)))))
      : el("div", { class: "empty", "data-testid": "tasks-empty" }, board.note));
  }
  put(view, el("h2", {}, "Tasks"), body);
  await refresh();
  subscribe(`/api/events?after=${after}`, throttle(300, () => refresh().catch(() => {})));
}

// The chat keeps its conversation while the page lives, like any chat client.
const chatState = { pipeline: null, session: null, messages: [], log: [] };

async function chat() {
  const models = (await api("/v1/models")).data.map((m) => m.id);
  chatState.pipeline ||= models.includes("coaching") ? "coaching" : models[0];
  const log = el("div", { class: "chat", id: "chat-log" }, ...chatState.log);
  const select = el("select", { id: "chat-model", onchange: (e) => {
    chatState.pipeline = e.target.value; chatState.session = null; chatState.messages = []; chatState.log = []; put(log);
  } }, ...models.map((m) => el("option", { value: m, selected: m === chatState.pipeline ? "" : null }, m)));
  const input = el("textarea", { id: "chat-input", placeholder: "Say something…" });
  const send = el("button", { id: "chat-send", type: "submit" }, "Send");
  async function submit(e) {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    send.disabled = true;
    const mine = el("div", { class: "msg user" }, text);
    const early = el("div", { class: "early", "data-testid": "early" });
    const merged = el("div", { class: "merged", "data-testid": "merged", hidden: "" });
    const progress = el("div", { class: "progress", "data-testid": "progress" }, "starting…");
    const link = el("a", { "data-testid": "timeline-link", hidden: "" }, "open the timeline");
    const reply = el("div", { class: "msg assistant" }, early, merged, progress, link);
    chatState.log.push(mine, reply);
    log.append(mine, reply);
    chatState.messages.push({ role: "user", content: text });
    let content = "";
    try {
      const h = { "Content-Type": "application/json" };
      if (chatState.session) h["X-Cantata-Session"] = chatState.session;
      const response = await fetch("/v1/chat/completions", { method: "POST", headers: headers(h),
        body: JSON.stringify({ model: chatState.pipeline, messages: chatState.messages, stream: true }) });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        throw new Error((body.error && body.error.message) || response.statusText);
      }
      chatState.session = response.headers.get("X-Cantata-Session");
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      const states = {};
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (!block.startsWith("data: ")) continue;  // heartbeats are comments
          const data = block.slice(6);
          if (data === "[DONE]") continue;
          const chunk = JSON.parse(data);
          const delta = chunk.choices[0].delta.content;
          if (delta) {
            content += delta;
            const at = content.indexOf(SEPARATOR);
            early.textContent = at >= 0 ? content.slice(0, at) : content;
            if (at >= 0) { merged.hidden = false; merged.textContent = content.slice(at + SEPARATOR.length); }
          }
          const info = chunk.cantata;
          if (info && info.turn_id && link.hidden) {  // watch it live while it runs
            link.href = `#/turn/${info.turn_id}`;
            link.hidden = false;
          }
          if (info && info.agent && info.event) {
            states[info.agent] = info.event.replace("agent_", "");
            progress.textContent = `${info.done}/${info.total} done · ` +
              Object.entries(states).map(([a, s]) => `${a} ${s}`).join(", ");
          }
          if (chunk.choices[0].finish_reason && info && info.turn_id) {
            if (!content.includes(SEPARATOR) && info.status === "failed") merged.hidden = true;
            progress.textContent = info.error ? `error: ${info.error}`
              : `${info.status}: ${info.agents.filter((a) => a.status === "ok").length} of ${info.agents.length} agents ok · `;
          }
        }
      }
      chatState.messages.push({ role: "assistant", content });
    } catch (error) {
      progress.textContent = "error: " + error.message;
      progress.className = "progress status-failed";
      chatState.messages.pop();
    } finally {
      send.disabled = false;
    }
  }
  put(view, el("h2", {}, "Chat ", select, " ",
    el("button", { class: "small", onclick: () => { chatState.session = null; chatState.messages = []; chatState.log = []; put(log); } }, "new chat")),
    el("div", { class: "panel" }, log, el("form", { class: "chat-form", onsubmit: submit }, input, send)));
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); send.click(); } });
}

// -- routing -------------------------------------------------------------------------------

const VIEWS = { overview, chat, turn: timeline, blackboard, sessions, plan, tasks };

async function route() {
  for (const stop of cleanup) stop();
  cleanup = [];
  const [name, arg] = location.hash.replace(/^#\/?/, "").split("/");
  const current = VIEWS[name] ? name : "overview";
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === current);
  try {
    await VIEWS[current](arg ? decodeURIComponent(arg) : null);
  } catch (error) {
    showError(error);
  }
}

async function whoami() {
  try {
    const who = await api("/api/whoami");
    document.getElementById("who").textContent = `${who.user}${who.admin ? " (admin)" : ""} · ${who.auth}`;
  } catch (error) {
    document.getElementById("who").textContent = "no valid API key";
  }
}

document.getElementById("key-button").addEventListener("click", () => {
  const value = prompt("API key (cnt_…); empty to forget it", key());
  if (value === null) return;
  if (value.trim()) localStorage.setItem("cantata-key", value.trim()); else localStorage.removeItem("cantata-key");
  whoami();
  route();
});
window.addEventListener("hashchange", route);
whoami();
route();
