// @ts-check
// The task graph of a run's page, drawn for the rows in view only (a run of 10,000 tasks
// scrolls as one of ten).

import { el, rowLook } from "../dom.js";
import { LANE_H, NODE_H, NODE_W } from "../layout.js";

const OVERSCAN = 30; // rows drawn beyond the visible ones

/**
 * Draws the graph of `S.layout` into `graphBox`, the rows in view; a click on a task opens it.
 * @param {HTMLElement} graphBox
 * @param {import("./page.js").State} S
 * @param {(id: string) => void} openTask
 */
export function paintGraph(graphBox, S, openTask) {
  const L = S.layout;
  if (!L) return;
  const top = graphBox.scrollTop;
  const first = Math.max(0, Math.floor(top / LANE_H) - OVERSCAN);
  const last = Math.ceil((top + graphBox.clientHeight) / LANE_H) + OVERSCAN;
  const inView = (/** @type {number} */ a, /** @type {number} */ b) =>
    Math.max(a, b) >= first && Math.min(a, b) <= last;
  const svg = el("svg", {
    class: "dag",
    width: L.width,
    height: L.height,
    viewBox: `0 0 ${L.width} ${L.height}`,
    role: "group",
    "aria-label": `${L.rows.length} tasks`,
  });
  for (const b of L.boxes) {
    if (!inView(b.first, b.last)) continue;
    const row = L.rows[b.first];
    svg.append(
      el(
        "g",
        { class: `group st-${rowLook(row)}`, "data-group": row.id, "data-status": row.status },
        el("rect", {
          x: L.x(b.lo) - b.pad,
          y: L.y(b.first) - 4,
          width: L.x(b.hi) - L.x(b.lo) + NODE_W + 2 * b.pad,
          height: L.y(b.last) - L.y(b.first) + NODE_H + 8,
        }),
        el("text", { x: L.x(b.lo) - b.pad + 6, y: L.y(b.first) + 15 }, `${row.id} · ${row.status}`),
        el("title", {}, row.description),
      ),
    );
  }
  for (const e of L.edges) {
    if (!inView(e.from.row, e.to.row)) continue;
    const y1 = L.y(e.from.row) + NODE_H / 2;
    const y2 = L.y(e.to.row) + NODE_H / 2;
    const mid = (e.from.x + e.to.x) / 2;
    svg.append(
      el("path", {
        class: e.replaced ? "edge replaced" : "edge",
        d: `M${e.from.x},${y1} C${mid},${y1} ${mid},${y2} ${e.to.x},${y2}`,
      }),
    );
  }
  for (let i = first; i <= Math.min(last, L.rows.length - 1); i++) {
    const r = L.rows[i];
    if (r.group) continue;
    const look = rowLook(r);
    const label = r.id.length > 20 ? `${r.id.slice(0, 19)}…` : r.id;
    svg.append(
      el(
        "g",
        {
          class: `node st-${look}${S.selected === r.id ? " selected" : ""}`,
          "data-task": r.id,
          "data-status": r.status,
          tabindex: 0,
          role: "button",
          "aria-label": `${r.id}: ${look}`,
          onclick: () => openTask(r.id),
          onkeydown: (/** @type {KeyboardEvent} */ ev) =>
            (ev.key === "Enter" || ev.key === " ") && (ev.preventDefault(), openTask(r.id)),
        },
        el("rect", { x: L.x(L.rank.get(r.id)), y: L.y(i), width: NODE_W, height: NODE_H }),
        el("text", { x: L.x(L.rank.get(r.id)) + 6, y: L.y(i) + 15 }, label),
        el("title", {}, `${r.id}: ${look}${r.description && r.description !== r.id ? ` — ${r.description}` : ""}`),
      ),
    );
  }
  graphBox.replaceChildren(svg);
}
