// Chat with a pipeline over /v1/chat/completions, streamed. Each chunk's text says which
// reply it belongs to (`cantata.phase`), so the early and the merged reply each get a
// bubble of their own, whatever the text holds; the other agents' progress shows below.
import { api, failure, headers } from "../api.js";
import { el, put } from "../dom.js";
import { readEvents } from "../sse.js";

// The chat keeps its conversation while the page lives, like any chat client.
const chatState = { pipeline: null, session: null, messages: [], log: [] };

function reset(log) {
  chatState.session = null;
  chatState.messages = [];
  chatState.log = [];
  put(log);
}

export async function chat(view) {
  const models = (await api("/v1/models")).data.map((m) => m.id);
  chatState.pipeline ||= models.includes("coaching") ? "coaching" : models[0];
  const log = el("div", { class: "chat", id: "chat-log" }, ...chatState.log);
  const select = el("select", { id: "chat-model", onchange: (e) => { chatState.pipeline = e.target.value; reset(log); } },
    ...models.map((m) => el("option", { value: m, selected: m === chatState.pipeline ? "" : null }, m)));
  const input = el("textarea", { id: "chat-input", placeholder: "Say something…" });
  const send = el("button", { id: "chat-send", type: "submit" }, "Send");

  async function submit(e) {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    send.disabled = true;
    const mine = el("div", { class: "msg user" }, text);
    const early = el("div", { class: "msg assistant early", "data-testid": "early" });
    const merged = el("div", { class: "msg assistant merged", "data-testid": "merged", hidden: "" });
    const progress = el("span", { class: "progress", "data-testid": "progress" }, "starting…");
    const link = el("a", { "data-testid": "timeline-link", hidden: "" }, "open the timeline");
    const status = el("div", { class: "chat-status muted" }, progress, " ", link);
    chatState.log.push(mine, early, merged, status);
    log.append(mine, early, merged, status);
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

  put(view, el("h2", {}, "Chat ", select, " ", el("button", { class: "small", onclick: () => reset(log) }, "new chat")),
    el("div", { class: "panel" }, log, el("form", { class: "chat-form", onsubmit: submit }, input, send)));
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); send.click(); } });
}
