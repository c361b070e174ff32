// Building the page: elements, SVG, and the small formats every view uses.

function build(node, attrs, children, setAttr) {
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined) setAttr(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  return build(node, attrs, children, (k, v) => (k === "class" ? (node.className = v) : node.setAttribute(k, v)));
}

const SVGNS = "http://www.w3.org/2000/svg";
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVGNS, tag);
  return build(node, attrs, children, (k, v) => node.setAttribute(k, v));
}

export function put(node, ...children) {  // replaceChildren, but null means nothing (not "null")
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
}

export function kv(...pairs) {  // a two-column grid: each label and value its own cell
  return el("div", { class: "kv" }, ...pairs.map((v) => (v instanceof Node ? v : el("span", {}, v ?? "–"))));
}

export function fmt(s) { return s === null || s === undefined ? "–" : `${Number(s).toFixed(2)} s`; }
export function json(value) { return JSON.stringify(value, null, 2); }
