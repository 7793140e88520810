// @ts-check
// The diff tab.

import { api } from "../api.js";
import { el, enc, fmt, showError } from "../dom.js";

/**
 * The diff tab: two runs (or one at two seqs) compared task by task.
 * @param {import("./page.js").RunView} V
 */
export function drawDiff(V) {
  const left = el("input", {
    id: "diff-left",
    value: `${V.run}@${V.S.seq}`,
    "aria-label": "left side, RUN or RUN@SEQ",
  });
  const right = el("input", { id: "diff-right", value: V.run, "aria-label": "right side, RUN or RUN@SEQ" });
  const out = el("div", { id: "diff-out" });
  async function compare() {
    /** @type {import("../types").DiffView} */
    const d = await api(`/v1/diff?left=${enc(left.value.trim())}&right=${enc(right.value.trim())}`);
    const pair = (/** @type {any} */ p) => (p ? `${fmt(p[0])} → ${fmt(p[1])}` : "");
    out.replaceChildren(
      d.tasks.length
        ? el(
            "table",
            { id: "diff" },
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                ["Task", "Where", "Status", "Attempts", "Rescues", "Score", "Dimensions", "Replaced by"].map((h) =>
                  el("th", { scope: "col" }, h),
                ),
              ),
            ),
            el(
              "tbody",
              {},
              d.tasks.map((t) =>
                el(
                  "tr",
                  { "data-task": t.task },
                  el("td", {}, t.task),
                  el("td", {}, t.presence),
                  el("td", {}, pair(t.status)),
                  el("td", {}, pair(t.attempts)),
                  el("td", {}, pair(t.rescues)),
                  el("td", {}, pair(t.score)),
                  el(
                    "td",
                    {},
                    Object.entries(t.dimensions || {})
                      .map(([k, v]) => `${k} ${fmt(v.left)} → ${fmt(v.right)}`)
                      .join(", "),
                  ),
                  el("td", {}, (t.replaced_by || []).join(", ")),
                ),
              ),
            ),
          )
        : el("p", { class: "muted" }, "no task differs"),
      d.rerun
        ? el(
            "div",
            { id: "diff-rerun" },
            el("p", {}, `${d.rerun.run}'s model calls: ${d.rerun.said}`),
            el(
              "ul",
              {},
              d.rerun.calls.divergences.map((/** @type {string} */ w) => el("li", {}, `diverged: ${w}`)),
            ),
          )
        : null,
    );
  }
  const parent = V.S.meta.fork_of
    ? el(
        "button",
        {
          onclick: () => {
            left.value = `${V.S.meta.fork_of}@${V.S.meta.fork_at}`;
            right.value = V.run;
            compare().catch(showError);
          },
        },
        "This fork vs its parent",
      )
    : null;
  return el(
    "div",
    {},
    el(
      "div",
      { class: "filters" },
      el("label", {}, "Left ", left),
      el("label", {}, "Right ", right),
      el("button", { id: "diff-go", onclick: () => compare().catch(showError) }, "Compare"),
      parent,
    ),
    out,
  );
}
