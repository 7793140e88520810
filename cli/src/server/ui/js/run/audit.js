// @ts-check
// The audit tab: every eval decision, in the words `runlog audit` prints (the server sends
// them), sortable, flagged where a person should look twice.

import { api } from "../api.js";
import { el, enc, fmt, sortableTable } from "../dom.js";

/**
 * @param {import("./page.js").RunView} V
 */
export async function drawAudit(V) {
  /** @type {import("../types").AuditView} */
  const a = await api(`/v1/runs/${enc(V.run)}/audit`);
  /** @type {import("../types").WordedDecision[]} */
  const entries = a.audit.entries;
  if (!entries.length) return el("p", { class: "muted" }, "no eval decisions in this run");
  /** @type {import("../dom.js").Column<import("../types").WordedDecision>[]} */
  const columns = [
    {
      key: "seq",
      title: "Seq",
      num: true,
      sort: (e) => e.seq,
      cell: (e) =>
        el("a", { href: "#", onclick: (/** @type {Event} */ ev) => (ev.preventDefault(), V.setSeq(e.seq)) }, e.seq),
    },
    { key: "task", title: "Task", sort: (e) => e.task, cell: (e) => e.task },
    { key: "attempt", title: "Attempt", num: true, sort: (e) => e.attempt, cell: (e) => e.attempt },
    { key: "score", title: "Score", num: true, sort: (e) => e.score, cell: (e) => fmt(e.score) },
    {
      key: "dims",
      title: "Dimensions",
      sort: (e) => Object.keys(e.dimensions).length,
      cell: (e) =>
        Object.entries(e.dimensions)
          .map(([k, v]) => `${k} ${fmt(v)}`)
          .join(", "),
    },
    { key: "threshold", title: "Threshold", num: true, sort: (e) => e.threshold ?? -1, cell: (e) => fmt(e.threshold) },
    { key: "decision", title: "Decision", sort: (e) => e.words.decision, cell: (e) => e.words.decision },
    {
      key: "consequence",
      title: "Consequence",
      sort: (e) => e.words.consequence,
      cell: (e) => e.words.consequence + (e.rolled_back ? " (rolled back)" : ""),
    },
    { key: "flags", title: "Flags", sort: (e) => e.flags.length, cell: (e) => e.words.flags.join("; ") },
  ];
  return sortableTable("audit", columns, entries, (e) => ({
    "data-seq": e.seq,
    "data-task": e.task,
    "data-flags": e.flags.map((f) => f.flag).join(" "),
    class: e.flags.length ? "flagged" : null,
  }));
}
