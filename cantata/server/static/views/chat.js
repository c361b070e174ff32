// Chat with a pipeline over /v1/chat/completions, streamed. Each chunk's text says which
// reply it belongs to (`cantata.phase`), so the early and the merged reply each get a
// bubble of their own, whatever the text holds; the other agents' progress shows below.
// A session has its own URL (#/chat/SESSION): a reload, or the Sessions view, reads the
// conversation back from /api/sessions and the next message continues it.
import { api, failure, headers } from "../api.js";
import { el, put } from "../dom.js";
import { readEvents, subscribe } from "../sse.js";

// The conversation shown, kept while the page lives (a turn still streaming keeps filling
// its bubbles when the user looks at another view, and shows whole on coming back).
const chatState = { pipeline: null, session: null, messages: [], log: [], stale: false };

function showSession(id) {  // the address bar follows the session, without leaving the view
  if (location.hash.startsWith("#/chat")) history.replaceState(null, "", id ? `#/chat/${encodeURIComponent(id)}` : "#/chat");
}

function reset(log) {
  chatState.session = null;
  chatState.messages = [];
  chatState.log = [];
  put(log);
  showSession(null);
}

// One turn's bubbles: the person's message, the early and the merged reply, a status line.
function turnBubbles(text) {
  const mine = el("div", { class: "msg user", "data-testid": "mine" }, text);
  const early = el("div", { class: "msg assistant early", "data-testid": "early", hidden: "" });
  const merged = el("div", { class: "msg assistant merged", "data-testid": "merged", hidden: "" });
  const progress = el("span", { class: "progress", "data-testid": "progress" }, "starting…");
  const link = el("a", { "data-testid": "timeline-link", hidden: "" }, "open the timeline");
  const status = el("div", { class: "chat-status muted" }, progress, " ", link);
  return { early, merged, progress, link, nodes: [mine, early, merged, status] };
}

function fill(bubble, text) {
  if (!text) return;
  bubble.hidden = false;
  bubble.textContent = text;
}

// The session as stored: each turn's message and replies, and the history the next
// message is sent with (each assistant message as a plain client saw it streamed).
async function restore(id) {
  const session = await api(`/api/sessions/${encodeURIComponent(id)}`);
  Object.assign(chatState, { pipeline: session.pipeline, session: session.id, messages: [], log: [], stale: false });
  for (const t of session.turn_list) {
    const b = turnBubbles(t.message);
    fill(b.early, t.early);
    fill(b.merged, t.merged ?? (t.early ? null : t.reply));
    b.progress.textContent = t.status === "running" ? "still running…" : t.status;
    b.progress.className = `progress status-${t.status}`;
    b.link.href = `#/turn/${t.turn_id}`;
    b.link.hidden = false;
    chatState.log.push(...b.nodes);
    chatState.messages.push({ role: "user", content: t.message });
    const said = [t.early, t.merged].filter(Boolean).join("\n\n") || t.reply;
    if (said) chatState.messages.push({ role: "assistant", content: said });
  }
  return session.turn_list[session.turn_list.length - 1] || null;
}

function again() {  // show the view once more, read from the server
  chatState.stale = true;
  dispatchEvent(new HashChangeEvent("hashchange"));
}

export async function chat(view, sessionId) {
  const models = (await api("/v1/models")).data.map((m) => m.id);
  let running = null;  // a turn of the session still running when it was opened
  if (sessionId && (sessionId !== chatState.session || chatState.stale)) {
    const last = await restore(sessionId);
    if (last && last.status === "running") running = last;
  } else if (!sessionId && chatState.session) {
    showSession(chatState.session);
  }
  if (!models.includes(chatState.pipeline)) chatState.pipeline = models.includes("coaching") ? "coaching" : models[0];
  const log = el("div", { class: "chat", id: "chat-log" }, ...chatState.log);
  const select = el("select", { id: "chat-model", "aria-label": "pipeline", onchange: (e) => { chatState.pipeline = e.target.value; reset(log); } },
    ...models.map((m) => el("option", { value: m, selected: m === chatState.pipeline ? "" : null }, m)));
  const input = el("textarea", { id: "chat-input", placeholder: "Say something…", "aria-label": "message" });
  const send = el("button", { id: "chat-send", type: "submit" }, "Send");
  if (running) {  // it finishes on its own: show it when it has
    // Its replies are stored just after `turn_delivered`: read it again a moment later
    // (a read that still finds it running subscribes again, and so on).
    subscribe(`/api/turns/${running.turn_id}/events`, (event) => { if (event.type === "turn_delivered") setTimeout(again, 300); });
  }

  async function submit(e) {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    send.disabled = true;
    const { early, merged, progress, link, nodes } = turnBubbles(text);
    chatState.log.push(...nodes);
    log.append(...nodes);
    chatState.messages.push({ role: "user", content: text });
    let content = "";  // as a plain client shows it, sent back as the history
    const bubbles = { early, merged };
    const states = {};
    try {
      const h = { "Content-Type": "application/json" };
      if (chatState.session) h["X-Cantata-Session"] = chatState.session;
      const response = await fetch("/v1/chat/completions", { method: "POST", headers: headers(h),
        body: JSON.stringify({ model: chatState.pipeline, messages: chatState.messages, stream: true }) });
      if (!response.ok) throw await failure(response);
      chatState.session = response.headers.get("X-Cantata-Session");
      showSession(chatState.session);
      for await (const event of readEvents(response)) {
        if (event.data === "[DONE]") break;
        const chunk = JSON.parse(event.data);
        const delta = chunk.choices[0].delta.content;
        const info = chunk.cantata || {};
        if (delta) {
          content += delta;
          const bubble = bubbles[info.phase];  // the blank line between them ("separator") has none
          if (bubble) { bubble.hidden = false; bubble.textContent += delta; }
        }
        if (info.turn_id && link.hidden) {  // watch it live while it runs
          link.href = `#/turn/${info.turn_id}`;
          link.hidden = false;
        }
        if (info.agent && info.event) {
          states[info.agent] = info.event.replace("agent_", "");
          progress.textContent = `${info.done}/${info.total} done · ` +
            Object.entries(states).map(([a, s]) => `${a} ${s}`).join(", ");
        }
        if (chunk.choices[0].finish_reason && info.turn_id) {
          progress.textContent = info.error ? `error: ${info.error}`
            : `${info.status}: ${info.agents.filter((a) => a.status === "ok").length} of ${info.agents.length} agents ok · `;
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

  put(view, el("h2", {}, "Chat ", select, " ", el("button", { class: "small", id: "new-chat", onclick: () => reset(log) }, "new chat")),
    el("div", { class: "panel" }, log, el("form", { class: "chat-form", onsubmit: submit }, input, send)));
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); send.click(); } });
}
