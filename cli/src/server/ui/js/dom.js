// @ts-check
// What every page draws with: elements, words for values, errors, sortable tables. Text from a
// run (task ids, agent output) only ever enters the page as text nodes, never as markup.

/** @type {Record<string, number>} How long the page took to open, for the tests' measurements. */
export const timings = {};
// @ts-ignore: read by the tests through the window.
window.runlogTimings = timings;

/**
 * The first element `sel` selects under `root`.
 * @param {string} sel
 * @param {ParentNode} [root]
 * @returns {any}
 */
export const $ = (sel, root = document) => root.querySelector(sel);

/**
 * An element with attributes (`on…` functions become listeners, a `style` object sets its
 * properties) and children.
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {...any} children
 * @returns {any}
 */
export function el(tag, attrs = {}, ...children) {
  const svg = ["svg", "g", "rect", "text", "path", "title", "circle", "line"].includes(tag);
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    // Through the CSSOM: the content-security policy refuses inline style attributes.
    else if (k === "style" && typeof v === "object") Object.assign(node.style, v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

export const enc = encodeURIComponent;

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A value as text.
 * @param {unknown} v
 */
export function fmt(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  return JSON.stringify(v);
}

/** @param {number | null | undefined} ms */
export function when(ms) {
  if (ms === null || ms === undefined) return "";
  const d = new Date(ms);
  return d
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** @param {number | null | undefined} ms */
export function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return "";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

let errorTimer = 0;

/**
 * Shows an error (with the server's hint) until clicked away, or for 12 s.
 * @param {any} e
 */
export function showError(e) {
  const box = $("#error");
  box.textContent = e.hint ? `${e.message}\nhint: ${e.hint}` : String(e.message || e);
  box.hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => (box.hidden = true), 12000);
}

/** @param {any[]} parts */
export function crumbs(parts) {
  const nav = $("#crumbs");
  nav.replaceChildren(el("a", { href: "/" }, "runs"), ...parts.flatMap((p) => [" / ", p]));
}

/**
 * A run's outcome: `succeeded`, or `failed: capped failed; downstream blocked`.
 * @param {any} o
 */
export function outcomeText(o) {
  if (o === null || o === undefined || typeof o === "string") return fmt(o);
  return Object.entries(o)
    .map(([k, v]) => {
      const why =
        v && typeof v === "object"
          ? Object.entries(v)
              .filter(([, l]) => Array.isArray(l) && l.length)
              .map(([w, l]) => `${l.join(", ")} ${w}`)
          : [];
      return why.length ? `${k}: ${why.join("; ")}` : k;
    })
    .join("; ");
}

/**
 * @param {string} name
 * @param {string} [extra]
 */
export function statusBadge(name, extra = "") {
  return el("span", { class: `status st-${name}` }, extra ? `${name} · ${extra}` : name);
}

/**
 * How a row looks: its status, or `blocked` when something stops it.
 * @param {import("./types").BoardRow} row
 */
export function rowLook(row) {
  const blocked = row.readiness && ["blocked", "circuit-open", "budget-spent"].includes(row.readiness.readiness);
  return blocked ? "blocked" : row.status;
}

/** @param {import("./types").Readiness | null} r */
export function readinessText(r) {
  if (!r) return "";
  if (r.readiness === "ready") return "ready";
  if (r.readiness === "waiting") return `waiting on ${r.on.join(", ")}`;
  if (r.readiness === "blocked") return `blocked by ${r.by.join(", ")}`;
  if (r.readiness === "circuit-open") return `blocked: stage ${r.stage}'s circuit is open`;
  if (r.readiness === "budget-spent") return `stopped: ${r.spent}`;
  return fmt(r);
}

/**
 * @template T
 * @typedef {{ key: string, title: string, num?: boolean, sort: (row: T) => any, cell: (row: T) => any }} Column
 */

/**
 * A table whose columns sort by a click on their heading (and Enter on a focused one).
 * @template T
 * @param {string} id
 * @param {Column<T>[]} columns
 * @param {T[]} rows
 * @param {(row: T) => Record<string, any>} rowAttrs
 */
export function sortableTable(id, columns, rows, rowAttrs) {
  /** @type {string | null} */
  let key = null;
  let dir = 1;
  const body = el("tbody");
  const heads = columns.map((c) =>
    el(
      "th",
      {
        "data-key": c.key,
        class: c.num ? "num" : null,
        tabindex: 0,
        scope: "col",
        onclick: () => sortBy(c.key),
        onkeydown: (/** @type {KeyboardEvent} */ e) => e.key === "Enter" && sortBy(c.key),
      },
      c.title,
    ),
  );
  function draw() {
    const column = columns.find((c) => c.key === key);
    const sorted = !column
      ? rows
      : [...rows].sort((a, b) => {
          const x = column.sort(a);
          const y = column.sort(b);
          return (x < y ? -1 : x > y ? 1 : 0) * dir;
        });
    body.replaceChildren(
      ...sorted.map((r) =>
        el("tr", rowAttrs(r), ...columns.map((c) => el("td", { class: c.num ? "num" : null }, c.cell(r)))),
      ),
    );
    heads.forEach((h) =>
      h.setAttribute("aria-sort", h.dataset.key === key ? (dir > 0 ? "ascending" : "descending") : "none"),
    );
  }
  /** @param {string} k */
  function sortBy(k) {
    dir = key === k ? -dir : 1;
    key = k;
    draw();
  }
  draw();
  return el("table", { id }, el("thead", {}, el("tr", {}, heads)), body);
}
