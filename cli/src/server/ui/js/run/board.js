// @ts-check
// The board tab: the tasks at the seq shown, with a sub-project's child run under its task.

import { el, enc, fmt, readinessText, rowLook, statusBadge } from "../dom.js";

/** @typedef {import("./page.js").RunView} RunView */

const BOARD_ROWS_SHOWN = 2000;

/**
 * The board at the seq shown: each task, its status, attempts, score and cost.
 * @param {RunView} V
 */
export function drawBoard(V) {
  const board = V.S.board;
  if (!board) return el("p", { class: "muted" }, "loading…");
  const rows = board.rows;
  const shown = rows.slice(0, BOARD_ROWS_SHOWN);
  const table = el(
    "table",
    { id: "board" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ["Task", "Status", "Attempt", "Rescues", "Score", "Cost", "Detail"].map((h) => el("th", { scope: "col" }, h)),
      ),
    ),
    el(
      "tbody",
      {},
      shown.flatMap((r) => [boardRow(r, 0, (e) => (e.preventDefault(), V.openTask(r.id))), ...childRows(V, r)]),
    ),
  );
  const more =
    rows.length > shown.length
      ? el("p", { class: "muted" }, `the first ${shown.length} of ${rows.length} tasks; the graph shows all`)
      : null;
  return el(
    "div",
    {},
    board.paused_for_replan ? el("p", {}, `dispatch paused: replan requested after ${board.paused_for_replan}`) : null,
    costLine(board),
    table,
    more,
  );
}

/**
 * Dollars as runlog shows them: four decimals (agent calls cost fractions of a cent).
 * @param {number} x
 */
export function usd(x) {
  return `$${x.toFixed(4)}`;
}

/**
 * A spend in a cell: `$0.0125`, `$0.0125+?` when some usage had no price, `-` for none.
 * @param {any} s
 */
export function costCell(s) {
  if (!s) return "-";
  const tokens = s.tokens.input + s.tokens.output;
  if (!tokens && !s.unpriced && !s.cost_usd) return "-";
  if (s.unpriced && !s.cost_usd) return "unpriced";
  return s.unpriced ? `${usd(s.cost_usd)}+?` : usd(s.cost_usd);
}

/**
 * The run's total and what is left of its budget, above the board.
 * @param {any} board
 */
function costLine(board) {
  const s = board.spend;
  if (!s) return null;
  const run = (board.budgets || []).find((/** @type {any} */ b) => b.task === null);
  const tokens = s.tokens.input + s.tokens.output;
  if (!tokens && !s.unpriced && !run) return null;
  const parts = [`cost ${usd(s.cost_usd)}${s.unpriced ? ` + ${s.unpriced} unpriced` : ""}, ${tokens} tokens`];
  if (run) {
    const left = [
      run.usd_left !== null ? usd(run.usd_left) : null,
      run.tokens_left !== null ? `${run.tokens_left} tokens` : null,
    ].filter(Boolean);
    parts.push(`budget left ${left.join(", ")}`);
  }
  return el(
    "p",
    { id: "cost", class: run && (run.usd_left === 0 || run.tokens_left === 0) ? "spent" : null },
    parts.join("; "),
  );
}

/**
 * @param {any} r
 * @param {number} base
 * @param {((e: Event) => void) | null} open
 * @param {string} [run] the child run it belongs to
 */
function boardRow(r, base, open, run) {
  const depth = base + r.depth;
  return el(
    "tr",
    {
      "data-task": r.id,
      "data-status": r.status,
      "data-readiness": r.readiness ? r.readiness.readiness : "",
      "data-run": run || null,
      class: run ? "child-row" : null,
    },
    el(
      "td",
      {},
      el(
        "a",
        { href: run ? `/runs/${enc(run)}` : "#", onclick: open },
        `${"  ".repeat(depth - 1)}${depth > r.depth ? "└ " : ""}${r.id}`,
      ),
    ),
    el("td", {}, statusBadge(rowLook(r) === "blocked" ? "blocked" : r.status)),
    el("td", { class: "num" }, r.attempt),
    el("td", { class: "num" }, r.rescues),
    el("td", { class: "num" }, fmt(r.score)),
    el("td", { class: "num", "data-cost": r.spend ? r.spend.cost_usd : 0 }, costCell(r.spend)),
    el(
      "td",
      {},
      [
        readinessText(r.readiness),
        r.failed_children.length ? `failed below: ${r.failed_children.join(", ")}` : "",
        r.note || "",
        ...(r.outside || []).map((/** @type {string} */ w) => `⚠ ${w}`),
      ]
        .filter(Boolean)
        .join("; "),
    ),
  );
}

/** A sub-project task's child run, under the task: its tasks, each linking to its page. */
/**
 * @param {RunView} V
 * @param {any} r
 */
function childRows(V, r) {
  const child = V.S.children && V.S.children.get(r.id);
  if (!child) return [];
  if (!child.board)
    return [el("tr", { class: "child-row" }, el("td", { colspan: 7 }, `child run ${child.run}: ${child.error}`))];
  return child.board.rows.map((c) => boardRow(c, r.depth, null, child.run));
}
