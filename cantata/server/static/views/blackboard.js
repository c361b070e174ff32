// A turn's blackboard (every entry, the conflicts) and what the user's memory holds, each
// output as readable fields with its JSON on a toggle.
import { api, latestTurnId } from "../api.js";
import { el, put } from "../dom.js";
import { output, scalesByPipeline } from "../fields.js";

export async function blackboard(view, turnId) {
  if (!turnId) {
    const latest = await latestTurnId();
    if (latest !== null) { location.hash = `#/blackboard/${latest}`; return; }
  }
  const [memory, pipelines] = await Promise.all([api("/api/memory"), api("/api/pipelines")]);
  const scales = scalesByPipeline(pipelines);
  const parts = [el("h2", {}, "Blackboard")];
  if (turnId) {
    const board = await api(`/api/turns/${turnId}/blackboard`);
    const own = scales[board.pipeline] || {};
    parts.push(el("p", {}, el("a", { href: `#/turn/${turnId}` }, `timeline of turn ${turnId}`), ` · ${board.pipeline}`));
    parts.push(...board.entries.map((e) => el("div", { class: "panel", "data-entry": e.agent },
      el("h3", {}, e.agent, " ", el("span", { class: `status-${e.status}` }, e.status)),
      e.error ? el("p", { class: "status-failed" }, e.error) : null, output(e.output, own[e.agent] || {}))));
    parts.push(el("h3", {}, "Conflicts"), board.conflicts.length
      ? el("div", {}, ...board.conflicts.map((c) => el("div", { class: "panel", "data-conflict": c.rule || "" }, output(c, {}))))
      : el("p", { class: "muted" }, "No conflicts in this turn."));
  } else {
    parts.push(el("div", { class: "empty" }, "No turn yet."));
  }
  parts.push(el("h3", {}, `Memory of ${memory.user} across ${memory.sessions} session(s)`));
  const remembered = Object.entries(memory.memory);
  if (!remembered.length) parts.push(el("p", { class: "muted" }, "Nothing remembered yet."));
  for (const [pipeline, agents] of remembered) {
    parts.push(el("h4", {}, pipeline), el("div", { class: "grid memory" }, ...Object.entries(agents).map(([agent, entry]) =>
      el("div", { class: "panel", "data-memory": agent },
        el("h3", {}, agent, " ", el("a", { class: "muted", href: `#/blackboard/${entry.turn_id}` }, `from turn ${entry.turn_id}`)),
        output(entry.output, (scales[pipeline] || {})[agent] || {})))));
  }
  put(view, ...parts);
}
