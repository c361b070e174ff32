// The one reader of server-sent events, for every view that streams: the event streams
// (/api/events, a turn's events) and a chat completion's chunks. Over fetch, since
// EventSource can neither send an API key nor POST.
import { headers } from "./api.js";
import { onLeave } from "./lifecycle.js";

// Each event of a response's body as {id, event, data} (data: the joined `data:` lines),
// until the server ends the stream. Comments (heartbeats) are skipped.
export async function* readEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = { id: null, event: null, data: [] };
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const at = line.indexOf(":");
        const name = at < 0 ? line : line.slice(0, at);
        const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
        if (name === "data") event.data.push(value);
        else if (name === "id" || name === "event") event[name] = value;
      }
      if (event.data.length || event.id !== null) yield { ...event, data: event.data.join("\n") };
    }
  }
}

// A stored-event stream, followed live: each event's JSON goes to onEvent. After a drop
// it resumes with Last-Event-ID, as the server's replay expects; it stops when the view
// is left, or when the server ends it (a turn's stream ends with the turn).
export function subscribe(path, onEvent) {
  const controller = new AbortController();
  let lastId = null;
  let stopped = false;
  async function run() {
    while (!stopped) {
      try {
        const h = headers(lastId ? { "Last-Event-ID": lastId } : {});
        const response = await fetch(path, { headers: h, signal: controller.signal });
        if (!response.ok) return;
        for await (const event of readEvents(response)) {
          if (event.id) lastId = event.id;
          if (event.data) onEvent(JSON.parse(event.data));
        }
        return;
      } catch (error) {
        if (stopped) return;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
  run();
  return onLeave(() => { stopped = true; controller.abort(); });
}
