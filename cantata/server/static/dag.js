// A pipeline's DAG as SVG: columns by depth, the critical path marked.
import { svg } from "./dom.js";

export function drawDag(pipeline) {
  const depth = {};
  for (const name of pipeline.order) {
    const agent = pipeline.agents.find((a) => a.name === name);
    depth[name] = Math.max(0, ...agent.reads.map((r) => depth[r] + 1));
  }
  const columns = {};
  for (const name of pipeline.order) (columns[depth[name]] ||= []).push(name);
  const W = 150, H = 46, GX = 60, GY = 18;
  const pos = {};
  const ncols = Object.keys(columns).length;
  const nrows = Math.max(...Object.values(columns).map((c) => c.length));
  for (const [col, names] of Object.entries(columns)) {
    names.forEach((name, i) => {
      const offset = ((nrows - names.length) * (H + GY)) / 2;
      pos[name] = { x: 10 + col * (W + GX), y: 10 + offset + i * (H + GY) };
    });
  }
  const critical = new Set(pipeline.critical_path);
  const onPath = (a, b) => critical.has(a) && critical.has(b) &&
    pipeline.critical_path.indexOf(b) === pipeline.critical_path.indexOf(a) + 1;
  const width = 20 + ncols * (W + GX) - GX, height = 20 + nrows * (H + GY) - GY;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", style: `max-width:${width}px`, role: "img",
    "aria-label": `DAG of ${pipeline.name}` },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse", orient: "auto" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "currentColor", class: "muted" }))));
  for (const [from, to] of pipeline.edges) {
    const a = pos[from], b = pos[to];
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    root.append(svg("path", { class: "edge" + (onPath(from, to) ? " critical" : ""),
      d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)" }));
  }
  for (const agent of pipeline.agents) {
    const p = pos[agent.name];
    const sub = agent.kind === "function" ? "function" : `${agent.model} → ${agent.instance || "unbound"}`;
    const tag = agent.deliver ? ` · ${agent.deliver}` : "";
    root.append(svg("g", { class: "node" + (critical.has(agent.name) ? " critical" : ""), "data-agent": agent.name },
      svg("rect", { x: p.x, y: p.y, width: W, height: H, rx: 8 }),
      svg("text", { x: p.x + 10, y: p.y + 19 }, agent.name + tag),
      svg("text", { x: p.x + 10, y: p.y + 36, class: "sub" }, sub.length > 24 ? sub.slice(0, 23) + "…" : sub)));
  }
  return root;
}
