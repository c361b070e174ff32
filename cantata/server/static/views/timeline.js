// A turn's timeline: one lane an agent (queued, running, retries, a reply cut or repaired),
// the critical path, the early and final deliveries, each tool call (a dot in its agent's lane;
// click it for the call and its result); live while the turn runs or waits for a person.
import { api, latestTurnId } from "../api.js";
import { approvalControls, pendingApprovals } from "../approvals.js";
import { el, fmt, json, kv, put, svg } from "../dom.js";
import { every, throttle } from "../lifecycle.js";
import { subscribe } from "../sse.js";

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

function drawGantt(turn, onPick, onPickCall) {
  const agents = turn.agents;
  const now = turn.status === "running" && turn.started_at ? Date.now() / 1000 - turn.started_at : 0;
  const calls = agents.flatMap((a) => a.tool_calls || []);
  const end = Math.max(0.001, now, ...agents.map((a) => a.finished_s || a.started_s || a.queued_s || 0),
    ...calls.map((c) => c.finished_s || c.at_s),
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
    // What the status "ok" does not say: a reply cut at max_tokens, or one Cantata's own
    // checks repaired (an echo of the prompt cut, a repeated sentence cut): a mark past the bar.
    const tail = x(a.finished_s ?? a.started_s ?? 0) + 4;
    const marks = [];
    if (a.finish_reason === "length") marks.push(["mark-cut", "✂", `${a.name}: reply cut at max_tokens`]);
    if ((a.quality || []).length) marks.push(["mark-repaired", "◆", `${a.name}: repaired: ${a.quality.join("; ")}`]);
    marks.forEach(([kind, symbol, title], k) => {
      lane.setAttribute(`data-${kind}`, "true");
      lane.append(svg("text", { class: kind, x: tail + 14 * k, y: y + 14, style: "fill: var(--critical); font-weight: bold" }, symbol,
        svg("title", {}, title)));
    });
    let free = -Infinity;  // calls close in time sit side by side, each one clickable
    (a.tool_calls || []).forEach((call) => {
      const cx = Math.max(x(call.at_s), free);
      free = cx + 12;
      const mark = svg("circle", { class: `tool-mark tool-${call.status}`, cx, cy: y + ROW / 2 - 3, r: 5,
        "data-tool": call.tool, "data-status": call.status, tabindex: 0, role: "button",
        onclick: (event) => { event.stopPropagation(); onPickCall(a, call); } },
        svg("title", {}, `${call.tool}: ${call.status}`));
      lane.append(mark);
    });
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
export async function timeline(view, turnId) {
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
        "finish", a.finish_reason === "length" ? "cut at max_tokens (length)" : a.finish_reason || "–",
        "repaired", (a.quality || []).join("; ") || "nothing",
        "attempts", a.attempts, "tokens", `${a.prompt_tokens} prompt (${a.cached_tokens} cached) + ${a.completion_tokens} completion`,
        "retries", (a.retries || []).map((r) => `${r.kind} at ${fmt(r.at_s)}`).join(", ") || "none",
        "error", a.error || "none"),
      el("h3", {}, "Output"), el("pre", {}, json(a.output)));
  }
  function pickCall(a, call) {
    const outcome = call.status === "ok" ? ["result", el("pre", {}, call.result ?? "")]
      : call.error ? ["error", el("pre", {}, call.error)] : ["outcome", call.status === "waiting" ? "waiting for a person" : "not yet"];
    put(detail, el("h3", {}, `${a.name} called ${call.tool} `, el("span", { class: `status-${call.status}` }, call.status)),
      kv("step", `${call.step} (call ${call.index + 1})`, "arguments", el("pre", {}, json(call.arguments)), ...outcome,
        "took", fmt(call.duration_s),
        "approval", call.approval ? `${call.approval}: ${call.approval_status}${call.reason ? ` (${call.reason})` : ""}` : "not needed"),
      call.approval_status === "pending" ? approvalControls({ id: call.approval }, () => refresh()) : null);
  }
  async function refresh() {
    const turn = await api(`/api/turns/${turnId}`);
    const done = turn.agents.filter((a) => ["ok", "failed", "skipped"].includes(a.status)).length;
    put(head, 
      el("h2", {}, `Turn ${turn.turn} of session ${turn.session} `, el("span", { class: `status-${turn.status}`, id: "turn-status" }, turn.status)),
      el("p", {}, el("b", {}, "Message: "), turn.message),
      turn.quality?.note ? el("p", { id: "turn-quality" }, el("b", {}, "◆ Quality: "), turn.quality.note) : null,
      el("p", { class: "muted", id: "turn-progress" }, `${done} of ${turn.agents.length} agents done · `,
        el("a", { href: `#/blackboard/${turnId}` }, "blackboard")),
      el("div", { class: "legend muted" }, el("span", {}, el("i", { style: "background:var(--queued)" }), "queued"),
        el("span", {}, el("i", { style: "background:var(--ok)" }), "ran (ok)"),
        el("span", {}, el("i", { style: "background:var(--failed)" }), "failed"),
        el("span", {}, el("i", { style: "border:2px solid var(--critical)" }), "critical path"),
        el("span", {}, "▲ retry / repair"), el("span", {}, "✂ cut at max_tokens"),
        el("span", {}, "◆ repaired by Cantata's checks"), el("span", {}, "● tool call"),
        el("span", {}, "dashed: early and final delivery")),
      turn.status === "waiting" ? await pendingApprovals(turnId, () => refresh()) : null);
    put(chart, drawGantt(turn, pick, pickCall));
    return turn;
  }
  put(view, head, chart, detail);
  const turn = await refresh();
  if (turn.status === "running" || turn.status === "waiting") {
    let stopClock = null;
    const again = throttle(150, () => refresh().then((t) => {
      if (t.status !== "running" && stopClock) { stopClock(); stopClock = null; }
    }).catch(() => {}));
    subscribe(`/api/turns/${turnId}/events`, again);  // the stream ends with the turn (not while it waits)
    stopClock = every(500, again);  // queued and running bars grow with the clock
  }
}
