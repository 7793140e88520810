// @ts-check
// The supervisor tab.

import { api } from "../api.js";
import { duration, el, enc, fmt } from "../dom.js";

/**
 * The supervisor tab: stage health and the supervisor's stack at the seq shown.
 * @param {import("./page.js").RunView} V
 */
export async function drawSupervisor(V) {
  /** @type {[import("../types").StackView, import("../types").StagesView]} */
  const [st, sg] = await Promise.all([
    api(`/v1/runs/${enc(V.run)}/stack?at=${V.S.seq}`),
    api(`/v1/runs/${enc(V.run)}/stages?at=${V.S.seq}`),
  ]);
  const stages = el(
    "table",
    { id: "stages" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ["Stage", "Runs", "Done", "Failed", "In a row", "Circuit", "Time"].map((h) => el("th", { scope: "col" }, h)),
      ),
    ),
    el(
      "tbody",
      {},
      sg.stages.map((s) =>
        el(
          "tr",
          { "data-stage": s.stage, class: s.circuit !== "closed" ? "flagged" : null },
          el("td", {}, s.stage),
          el("td", { class: "num" }, s.executions),
          el("td", { class: "num" }, s.completions),
          el("td", { class: "num" }, s.failures),
          el("td", { class: "num" }, s.consecutive_failures),
          el("td", {}, fmt(s.circuit)),
          el("td", { class: "num" }, duration(s.total_duration_ms)),
        ),
      ),
    ),
  );
  const stack = el(
    "table",
    { id: "stack" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ["Seq", "Stage", "Task", "State", "Retry", "Time", "Error or result"].map((h) => el("th", { scope: "col" }, h)),
      ),
    ),
    el(
      "tbody",
      {},
      st.stack.map((s) =>
        el(
          "tr",
          {},
          el("td", { class: "num" }, s.seq),
          el("td", {}, s.stage),
          el("td", {}, fmt(s.task)),
          el("td", {}, s.state),
          el("td", { class: "num" }, fmt(s.retry_count)),
          el("td", { class: "num" }, duration(s.duration_ms)),
          el("td", {}, s.error ? fmt(s.error[0]) : fmt(s.result)),
        ),
      ),
    ),
  );
  return el(
    "div",
    {},
    el("h2", {}, "Stage health"),
    stages,
    el("h2", {}, `Supervisor stack at seq ${st.seq} (newest first)`),
    stack,
  );
}
