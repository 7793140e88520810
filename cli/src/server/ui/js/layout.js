// @ts-check
// Where the task graph puts each task, group box and edge: a pure function of the board.

export const NODE_W = 150;
export const NODE_H = 22;
const COL_W = 178;
export const LANE_H = 30;

/**
 * A board row with its edges of the task graph (the board view's `links`).
 * @typedef {import("./types").BoardRow & { after: string[], replaced_by: string[] }} GraphRow
 */

/**
 * Tasks placed by dependency rank (x) in board order (y), so a group's tasks are adjacent
 * rows and its box encloses exactly them.
 * @param {GraphRow[]} rows
 */
export function layout(rows) {
  const byId = new Map(rows.map((r, i) => [r.id, { ...r, row: i }]));
  const kids = new Map();
  for (const r of rows)
    if (r.parent && byId.has(r.parent)) (kids.get(r.parent) || kids.set(r.parent, []).get(r.parent)).push(r.id);
  const needs = new Map();
  for (const r of rows) {
    if (r.group) {
      needs.set(r.id, kids.get(r.id) || []);
      continue;
    }
    const deps = [];
    let cur = byId.get(r.id);
    for (let hops = 0; cur && hops < 64; hops++) {
      deps.push(...cur.after.filter((d) => byId.has(d)));
      cur = cur.parent ? byId.get(cur.parent) : undefined;
    }
    needs.set(r.id, deps);
  }
  // Rank by an iterative post-order walk (a chain of 10,000 tasks would overflow recursion);
  // a cycle, which the rules refuse anyway, is cut where it is met.
  const rank = new Map();
  const seen = new Set();
  for (const r of rows) {
    if (rank.has(r.id)) continue;
    /** @type {[string, number][]} */
    const stack = [[r.id, 0]];
    seen.add(r.id);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const list = needs.get(top[0]);
      if (top[1] < list.length) {
        const next = list[top[1]++];
        if (!rank.has(next) && !seen.has(next)) {
          seen.add(next);
          stack.push([next, 0]);
        }
        continue;
      }
      stack.pop();
      const node = byId.get(top[0]);
      if (!node) continue;
      let k = node.group ? 0 : -1;
      for (const d of list) k = Math.max(k, rank.get(d) ?? 0);
      rank.set(top[0], node.group ? k : k + 1);
    }
  }
  // A group's box: its rows (contiguous in board order) and its tasks' ranks, padded by how
  // many groups it holds inside, so nested boxes stay apart.
  const boxes = [];
  const nestDepth = new Map();
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i];
    if (!r.group) continue;
    let last = i;
    let lo = Infinity;
    let hi = -Infinity;
    let inner = 0;
    for (let j = i + 1; j < rows.length && rows[j].depth > r.depth; j++) {
      last = j;
      if (rows[j].group) inner = Math.max(inner, nestDepth.get(rows[j].id) || 0);
      else {
        lo = Math.min(lo, rank.get(rows[j].id));
        hi = Math.max(hi, rank.get(rows[j].id));
      }
    }
    if (lo === Infinity) lo = hi = rank.get(r.id) || 0;
    nestDepth.set(r.id, inner + 1);
    boxes.push({ id: r.id, first: i, last, lo, hi, pad: 8 * (inner + 1) });
  }
  const margin = 12 + 8 * Math.max(0, ...boxes.map((b) => b.pad / 8));
  const x = (/** @type {number} */ k) => margin + k * COL_W;
  const y = (/** @type {number} */ i) => 8 + i * LANE_H;
  const boxOf = new Map(boxes.map((b) => [b.id, b]));
  const end = (/** @type {string} */ id) => {
    const b = boxOf.get(id);
    const row = byId.get(id)?.row ?? 0;
    return b ? { x: x(b.hi) + NODE_W + b.pad, row } : { x: x(rank.get(id) ?? 0) + NODE_W, row };
  };
  const edges = [];
  for (const r of rows) {
    if (r.group) continue;
    for (const d of r.after)
      if (byId.has(d))
        edges.push({ from: end(d), to: { x: x(rank.get(r.id) ?? 0), row: byId.get(r.id)?.row ?? 0 }, replaced: false });
  }
  for (const r of rows) {
    for (const n of r.replaced_by || [])
      if (byId.has(n))
        edges.push({ from: end(r.id), to: { x: x(rank.get(n) ?? 0), row: byId.get(n)?.row ?? 0 }, replaced: true });
  }
  const width = x(Math.max(0, ...rank.values()) + 1) + margin;
  return { rows, rank, boxes, edges, x, y, width, height: y(rows.length) + 8 };
}
