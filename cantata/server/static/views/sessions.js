// A user's sessions and turns, each session a link to continue it in the chat; export or
// delete everything kept about them.
import { api } from "../api.js";
import { el, json, put } from "../dom.js";

export async function sessions(view, arg) {
  const who = await api("/api/whoami");
  const user = arg || who.user;
  const list = await api(`/api/sessions?user=${encodeURIComponent(user)}`);
  const body = el("div");
  const picker = who.admin ? el("form", { onsubmit: (e) => { e.preventDefault(); location.hash = `#/sessions/${e.target.user.value}`; } },
    "User ", el("input", { name: "user", value: user }), " ", el("button", { type: "submit" }, "Show")) : null;
  // Only one's own session can be continued (a turn is the caller's, even for an admin).
  const resume = (s) => (s.user === who.user
    ? el("a", { href: `#/chat/${encodeURIComponent(s.id)}`, "data-testid": "continue" }, "continue in chat") : null);
  async function showSession(id) {
    const s = await api(`/api/sessions/${encodeURIComponent(id)}`);
    put(body, el("h3", {}, `Session ${s.id} (${s.pipeline}) `, resume(s)), s.summary ? el("p", { class: "muted" }, "Summary: ", s.summary) : null,
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
    dispatchEvent(new HashChangeEvent("hashchange"));  // show the same view again, now empty
  }
  put(view, el("h2", {}, `Sessions of ${user}`), picker,
    el("p", {}, el("button", { onclick: exportAll }, "Export as JSON"), " ", el("button", { class: "danger", onclick: forget }, "Delete everything")),
    list.length ? el("table", { id: "session-list" }, el("tr", {}, el("th", {}, "session"), el("th", {}, "pipeline"), el("th", {}, "turns"), el("th", {}, "started"), el("th", {}, "")),
      ...list.map((s) => el("tr", { "data-session": s.id }, el("td", {}, el("a", { href: "javascript:void 0", onclick: () => showSession(s.id) }, s.id)),
        el("td", {}, s.pipeline), el("td", {}, s.turns), el("td", {}, s.created_at ? new Date(s.created_at * 1000).toLocaleString() : "–"),
        el("td", {}, resume(s)))))
      : el("div", { class: "empty" }, "No sessions yet."),
    body);
}
