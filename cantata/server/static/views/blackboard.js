// A turn's blackboard (every entry, the conflicts) and what the user's memory holds.
import { api, latestTurnId } from "../api.js";
import { el, json, put } from "../dom.js";

export async function blackboard(view, turnId) {
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
