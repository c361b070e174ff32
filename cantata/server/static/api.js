// The JSON API, with the API key the user gave (kept in localStorage).

export function key() { return localStorage.getItem("cantata-key") || ""; }

export function headers(extra = {}) {
  const h = { ...extra };
  if (key()) h["Authorization"] = "Bearer " + key();
  return h;
}

// The error an API response carries, in OpenAI's shape: {"error": {"message", ...}}.
export async function failure(response) {
  const body = await response.json().catch(() => ({}));
  return new Error((body.error && body.error.message) || response.statusText);
}

export async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers(options.headers || {}) });
  if (!response.ok) throw await failure(response);
  return response.json().catch(() => ({}));
}

export async function latestTurnId() {
  const sessions = await api("/api/sessions");
  if (!sessions.length) return null;
  const detail = await api(`/api/sessions/${sessions[0].id}`);
  const turns = detail.turn_list;
  return turns.length ? turns[turns.length - 1].turn_id : null;
}
