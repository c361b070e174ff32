// Cantata's dashboard: plain JavaScript modules over the JSON API and the event streams,
// no build step. Each view has its own URL (#/view/arg) and module (views/); every view
// reads /api and updates live.
import { api, key } from "./api.js";
import { el, put } from "./dom.js";
import { leave } from "./lifecycle.js";
import { blackboard } from "./views/blackboard.js";
import { chat } from "./views/chat.js";
import { overview } from "./views/overview.js";
import { plan } from "./views/plan.js";
import { sessions } from "./views/sessions.js";
import { tasks } from "./views/tasks.js";
import { timeline } from "./views/timeline.js";

const VIEWS = { overview, chat, turn: timeline, blackboard, sessions, plan, tasks };
const view = document.getElementById("view");

async function route() {
  leave();
  const [name, arg] = location.hash.replace(/^#\/?/, "").split("/");
  const current = VIEWS[name] ? name : "overview";
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === current);
  try {
    await VIEWS[current](view, arg ? decodeURIComponent(arg) : null);
  } catch (error) {
    put(view, el("div", { class: "panel status-failed" }, String(error.message || error)));
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
