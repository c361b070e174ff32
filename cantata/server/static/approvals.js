// A tool call waiting for a person (`approve: true`): what would be called, and Approve /
// Deny (with a reason the model reads) through POST /api/approvals/{id}.
import { api } from "./api.js";
import { el, json } from "./dom.js";

export function approvalControls(approval, onDecided) {
  const reason = el("input", { type: "text", placeholder: "reason (optional; the model reads it if denied)",
    "aria-label": `reason for approval ${approval.id}`, class: "approval-reason" });
  const said = el("span", { class: "muted", role: "status" });
  async function decide(decision, buttons) {
    buttons.forEach((b) => { b.disabled = true; });
    try {
      await api(`/api/approvals/${approval.id}`, { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ decision, reason: reason.value.trim() || null }) });
      said.textContent = decision === "approve" ? "approved: the turn goes on" : "denied: the model is told";
      onDecided();
    } catch (error) {
      said.textContent = error.message;
      buttons.forEach((b) => { b.disabled = false; });
    }
  }
  const approve = el("button", { class: "approve", onclick: () => decide("approve", [approve, deny]) }, "Approve");
  const deny = el("button", { class: "danger deny", onclick: () => decide("deny", [approve, deny]) }, "Deny");
  return el("div", { class: "approval-controls" }, reason, " ", approve, " ", deny, " ", said);
}

// The turn's pending approvals, each with its call and controls; nothing when there are none.
export async function pendingApprovals(turnId, onDecided) {
  const pending = await api(`/api/approvals?turn_id=${turnId}`);
  if (!pending.length) return null;
  return el("div", { class: "panel approvals", id: "approvals" },
    el("h3", {}, "Waiting for your approval"),
    ...pending.map((a) => el("div", { class: "approval", "data-approval": a.id },
      el("p", {}, el("b", {}, a.agent), " would call ", el("b", {}, a.tool), " with"),
      el("pre", {}, json(a.arguments)),
      approvalControls(a, onDecided))));
}
