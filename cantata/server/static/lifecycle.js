// What the current view must stop (streams, timers) when the user leaves it.

let cleanup = [];

export function onLeave(stop) { cleanup.push(stop); return stop; }

export function leave() {
  for (const stop of cleanup) stop();
  cleanup = [];
}

export function every(ms, fn) {
  const t = setInterval(fn, ms);
  return onLeave(() => clearInterval(t));
}

export function throttle(ms, fn) {
  let pending = null;
  return () => { if (!pending) pending = setTimeout(() => { pending = null; fn(); }, ms); };
}
