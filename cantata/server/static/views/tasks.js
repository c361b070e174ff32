// The agent factory's tasks: one row a factory turn, redrawn on each of the user's events.
import { api } from "../api.js";
import { el, put } from "../dom.js";
import { throttle } from "../lifecycle.js";
import { subscribe } from "../sse.js";

export async function tasks(view) {
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
