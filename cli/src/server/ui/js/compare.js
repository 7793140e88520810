// @ts-check
// Two attempts side by side (`/compare?left=RUN&left_task=T&left_attempt=N&right=…`): an attempt
// and its rescue, or a task in a run and in its rerun. Their conversations call beside call, the
// first call that asks something else marked (and, for a rerun, the divergences `runlog diff`
// names), then each side's changes.

import { api } from "./api.js";
import { $, crumbs, el, enc, showError } from "./dom.js";
import { askedOf, callBlocks, searchBox } from "./run/conversation.js";
import { showPatch } from "./run/task.js";

/**
 * One side, from the address.
 * @typedef {{ run: string, task: string, attempt: number | null }} Side
 */

/**
 * @param {URLSearchParams} q
 * @param {string} name
 * @returns {Side}
 */
function sideOf(q, name) {
  const attempt = Number(q.get(`${name}_attempt`));
  return { run: q.get(name) || "", task: q.get(`${name}_task`) || "", attempt: attempt >= 1 ? attempt : null };
}

/** @param {Side} s */
const named = (s) => `${s.run} ${s.task}${s.attempt === null ? "" : ` attempt ${s.attempt}`}`;

export async function comparePage() {
  const q = new URLSearchParams(location.search);
  const left = sideOf(q, "left");
  const right = sideOf(q, "right");
  const main = $("#main");
  crumbs([el("span", {}, `${named(left)} beside ${named(right)}`)]);
  document.title = `compare · runlog`;
  if (!left.run || !left.task || !right.run || !right.task) {
    main.replaceChildren(
      el("p", {}, "Name two sides: /compare?left=RUN&left_task=TASK&left_attempt=N&right=RUN&right_task=TASK"),
    );
    return;
  }
  /** @param {Side} s */
  const calls = async (s) => {
    /** @type {import("./types").CallsView} */
    const v = await api(
      `/v1/runs/${enc(s.run)}/tasks/${enc(s.task)}/calls?turns=true${s.attempt === null ? "" : `&attempt=${s.attempt}`}`,
    );
    return v.calls;
  };
  const [a, b] = await Promise.all([calls(left), calls(right)]);
  let parted = null;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (askedOf(a[i]) !== askedOf(b[i])) {
      parted = i;
      break;
    }
  }
  /** @type {string[]} */
  let divergences = [];
  if (left.run !== right.run) {
    /** @type {import("./types").DiffView} */
    const d = await api(`/v1/diff?left=${enc(left.run)}&right=${enc(right.run)}`).catch(() => null);
    if (d && d.rerun) divergences = d.rerun.calls.divergences;
  }
  const leftBlocks = callBlocks(a, parted);
  const rightBlocks = callBlocks(b, parted);
  const pairs = el("div", { class: "compare conversation", id: "compare" });
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    pairs.append(
      el(
        "div",
        { class: "side", "data-side": "left", "data-call": i + 1 },
        leftBlocks[i] || el("p", { class: "muted" }, "no such call"),
      ),
      el(
        "div",
        { class: "side", "data-side": "right", "data-call": i + 1 },
        rightBlocks[i] || el("p", { class: "muted" }, "no such call"),
      ),
    );
  }
  const parting =
    parted === null
      ? "The two conversations ask the same at every call."
      : `They part at call ${parted + 1}: ${a[parted] ? `seq ${a[parted].seq} on the left` : "none on the left"}, ${b[parted] ? `seq ${b[parted].seq} on the right` : "none on the right"}.`;
  main.replaceChildren(
    el("h1", {}, "Side by side"),
    el(
      "div",
      { class: "compare" },
      [left, right].map((s) => el("h2", {}, el("a", { href: `/runs/${enc(s.run)}?task=${enc(s.task)}` }, named(s)))),
    ),
    el("p", { id: "parting", "data-call": parted === null ? "" : parted + 1 }, parting),
    divergences.length
      ? el(
          "ul",
          { id: "divergences" },
          divergences.map((d) => el("li", {}, d)),
        )
      : null,
    searchBox(pairs),
    pairs,
    el("h2", {}, "Their changes"),
    el("div", { class: "compare", id: "compare-diffs" }, await Promise.all([left, right].map(changes))),
  );
  main.dataset.state = "ready";
}

/**
 * A side's changes: each `changes-recorded` of its attempt(s), its patch shown.
 * @param {Side} s
 */
async function changes(s) {
  /** @type {import("./types").EventsPage} */
  const page = await api(`/v1/runs/${enc(s.run)}/events?task=${enc(s.task)}&kind=changes-recorded`);
  const box = el("div", { class: "side" });
  for (const ev of page.events) {
    const e = /** @type {any} */ (ev.event);
    if (s.attempt !== null && e.attempt !== s.attempt) continue;
    const pre = el("pre", { class: "diff", "data-attempt": e.attempt });
    box.append(
      el(
        "div",
        { class: "muted" },
        `attempt ${e.attempt}: ${e.files.length} file(s), +${e.insertions} −${e.deletions}`,
      ),
      pre,
    );
    try {
      showPatch(pre, e.blob ? await api(`/v1/blobs/${e.blob}`) : e.patch || "");
    } catch (err) {
      showError(err);
    }
  }
  if (!box.childElementCount) box.append(el("p", { class: "muted" }, "no changes recorded"));
  return box;
}
