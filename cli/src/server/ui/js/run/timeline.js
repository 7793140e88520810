// @ts-check
// The Timeline tab: the run over wall-clock time (`GET /v1/runs/RUN/timeline`). A row per task,
// only the rows in view drawn; bars for each attempt, its tests, its evaluation, its merge and
// each wait for a person; ticks for model calls and people's decisions; the run's rollbacks,
// stops and resumes as lines across. Ctrl+wheel zooms (around the pointer), a drag or Shift+wheel
// pans, + − 0 and ← → do the same from the keyboard; hovering names a bar and its duration, and a
// click (or Enter) opens its task at its seq. It follows a live run: the page redraws it as
// events arrive.

import { api } from "../api.js";
import { duration, el, enc, timings, when } from "../dom.js";

const ROW = 26; // a task's row, px
const LABEL = 140; // the task ids' column, px
const OVERSCAN = 10; // rows drawn beyond the visible ones

/**
 * What the tab keeps between draws of one run: the element, the timeline, the window shown.
 * @typedef {object} Kept
 * @property {string} run
 * @property {HTMLElement} root
 * @property {HTMLElement} scroller
 * @property {HTMLElement} spacer
 * @property {HTMLElement} axis
 * @property {HTMLElement} hover
 * @property {import("../types").Timeline | null} tl
 * @property {number} head the head the timeline was read at
 * @property {[number, number] | null} view the times shown, ms
 * @property {number} seqAt the time of the seq the page shows
 */

/** @type {Kept | null} */
let kept = null;

/**
 * The tab's element for the page's run, read again when the run has grown.
 * @param {import("./page.js").RunView} V
 */
export async function drawTimeline(V) {
  if (!kept || kept.run !== V.run) kept = build(V);
  const k = kept;
  if (!k.tl || k.head !== V.S.head) {
    const t0 = performance.now();
    /** @type {import("../types").Timeline} */
    const tl = await api(`/v1/runs/${enc(V.run)}/timeline`);
    timings.timeline_fetch_ms = Math.round(performance.now() - t0);
    const atEnd = !k.view || !k.tl || k.view[1] >= k.tl.end;
    k.tl = tl;
    k.head = V.S.head;
    // A window that showed the end keeps showing it as the run goes on.
    if (!k.view) k.view = [tl.start, Math.max(tl.end, tl.start + 1)];
    else if (atEnd) k.view = [k.view[0], Math.max(tl.end, k.view[0] + 1)];
  }
  const ev = V.S.events[V.S.seq - 1];
  k.seqAt = ev ? ev.at : 0;
  paint(k, V);
  k.root.dataset.state = "ready";
  return k.root;
}

/**
 * @param {import("./page.js").RunView} V
 * @returns {Kept}
 */
function build(V) {
  const spacer = el("div", { class: "tl-spacer" });
  const scroller = el("div", { class: "tl-scroll", role: "list", "aria-label": "tasks over time" }, spacer);
  const axis = el("div", { class: "tl-axis", "aria-hidden": "true" });
  const hover = el("div", { class: "tl-hover", role: "status", "aria-live": "polite", hidden: true });
  const zoom = (/** @type {number} */ f) => () => zoomBy(k, V, f, 0.5);
  const root = el(
    "div",
    {
      id: "timeline",
      class: "tl",
      tabindex: 0,
      "aria-label": "the run over time; + and − zoom, ← and → pan, 0 shows it all",
    },
    el(
      "div",
      { class: "tl-tools" },
      el("button", { id: "tl-in", onclick: zoom(0.5), "aria-label": "zoom in" }, "+"),
      el("button", { id: "tl-out", onclick: zoom(2), "aria-label": "zoom out" }, "−"),
      el("button", { id: "tl-fit", onclick: () => fit(k, V), "aria-label": "show the whole run" }, "Whole run"),
      el(
        "span",
        { class: "tl-legend muted" },
        ["attempt", "tests", "eval", "merge", "wait"].map((b) => el("span", { class: `tl-key key-${b}` }, b)),
        el("span", { class: "tl-key thin key-model-called" }, "model call"),
        el("span", { class: "tl-key thin key-decision" }, "decision"),
        el("span", { class: "tl-key thin key-run" }, "rollback, stop"),
      ),
    ),
    axis,
    scroller,
    hover,
  );
  /** @type {Kept} */
  const k = { run: V.run, root, scroller, spacer, axis, hover, tl: null, head: 0, view: null, seqAt: 0 };
  scroller.addEventListener("scroll", () => requestAnimationFrame(() => paint(k, V)));
  // Drawn first before the tab shows it: drawn again at its size, and as that changes.
  new ResizeObserver(() => paint(k, V)).observe(scroller);
  // Ctrl or ⌘ with the wheel zooms around the pointer; Shift, or a sideways wheel, pans; the
  // plain wheel scrolls the rows.
  scroller.addEventListener(
    "wheel",
    (/** @type {WheelEvent} */ e) => {
      const rect = scroller.getBoundingClientRect();
      const at = (e.clientX - rect.left - LABEL) / Math.max(1, rect.width - LABEL);
      if (e.ctrlKey || e.metaKey) zoomBy(k, V, e.deltaY > 0 ? 1.25 : 0.8, Math.min(1, Math.max(0, at)));
      else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) panBy(k, V, (e.deltaX || e.deltaY) / 500);
      else return;
      e.preventDefault();
    },
    { passive: false },
  );
  /** @type {{ x: number, view: [number, number] } | null} */
  let drag = null;
  scroller.addEventListener("pointerdown", (/** @type {PointerEvent} */ e) => {
    if (!k.view || /** @type {HTMLElement} */ (e.target).closest("button")) return;
    drag = { x: e.clientX, view: k.view };
  });
  window.addEventListener("pointerup", () => (drag = null));
  scroller.addEventListener("pointermove", (/** @type {PointerEvent} */ e) => {
    if (!drag) return;
    const width = Math.max(1, scroller.clientWidth - LABEL);
    const span = drag.view[1] - drag.view[0];
    const shift = (-(e.clientX - drag.x) / width) * span;
    k.view = [drag.view[0] + shift, drag.view[1] + shift];
    paint(k, V);
  });
  root.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    const keys = {
      "+": () => zoomBy(k, V, 0.5, 0.5),
      "=": () => zoomBy(k, V, 0.5, 0.5),
      "-": () => zoomBy(k, V, 2, 0.5),
      0: () => fit(k, V),
      ArrowLeft: () => panBy(k, V, -0.2),
      ArrowRight: () => panBy(k, V, 0.2),
    };
    const act = /** @type {Record<string, () => void>} */ (keys)[e.key];
    if (!act) return;
    act();
    // The page's own ← → move the scrubber: here they pan.
    e.preventDefault();
    e.stopPropagation();
  });
  return k;
}

/**
 * @param {Kept} k
 * @param {import("./page.js").RunView} V
 * @param {number} factor the new window's width over the old one's
 * @param {number} at where the zoom is centred, 0 to 1 across the window
 */
function zoomBy(k, V, factor, at) {
  if (!k.view) return;
  const [a, b] = k.view;
  const span = Math.max(1, (b - a) * factor);
  const pivot = a + (b - a) * at;
  k.view = [pivot - span * at, pivot - span * at + span];
  paint(k, V);
}

/**
 * @param {Kept} k
 * @param {import("./page.js").RunView} V
 * @param {number} share of the window's width
 */
function panBy(k, V, share) {
  if (!k.view) return;
  const shift = (k.view[1] - k.view[0]) * share;
  k.view = [k.view[0] + shift, k.view[1] + shift];
  paint(k, V);
}

/**
 * @param {Kept} k
 * @param {import("./page.js").RunView} V
 */
function fit(k, V) {
  if (!k.tl) return;
  k.view = [k.tl.start, Math.max(k.tl.end, k.tl.start + 1)];
  paint(k, V);
}

/**
 * Draws the axis and the rows in view.
 * @param {Kept} k
 * @param {import("./page.js").RunView} V
 */
function paint(k, V) {
  const tl = k.tl;
  if (!tl || !k.view) return;
  const [a, b] = k.view;
  const width = Math.max(200, (k.scroller.clientWidth || 800) - LABEL);
  const x = (/** @type {number} */ t) => ((t - a) / (b - a)) * width;
  k.spacer.style.height = `${tl.rows.length * ROW}px`;
  const top = k.scroller.scrollTop;
  const from = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
  const to = Math.min(tl.rows.length, Math.ceil((top + (k.scroller.clientHeight || 400)) / ROW) + OVERSCAN);
  const rows = [];
  for (let i = from; i < to; i++) rows.push(rowOf(tl.rows[i], i, x, width, k, V));
  // The run's own marks and the seq shown, across every row in view.
  const across = tl.marks
    .filter((m) => m.kind !== "run-finished" || x(m.at) < width)
    .map((m) => line(x(m.at), `tl-run k-${m.kind}`, `${m.kind} at seq ${m.seq}: ${m.label} (${when(m.at)})`));
  if (k.seqAt) across.push(line(x(k.seqAt), "tl-now", `seq ${V.S.seq} (${when(k.seqAt)})`));
  const overlay = el("div", { class: "tl-overlay", style: { height: `${tl.rows.length * ROW}px` } }, across);
  k.spacer.replaceChildren(overlay, ...rows);
  k.axis.replaceChildren(...axisTicks(a, b, width, tl.start));
}

/**
 * @param {number} px
 * @param {string} cls
 * @param {string} title
 */
function line(px, cls, title) {
  return el("div", { class: cls, style: { left: `${LABEL + px}px` }, title });
}

/**
 * The axis: about six times since the run began, at round steps.
 * @param {number} a
 * @param {number} b
 * @param {number} width
 * @param {number} start the run's first event
 */
function axisTicks(a, b, width, start) {
  const steps = [1, 5, 10, 50, 100, 500, 1e3, 5e3, 1e4, 3e4, 6e4, 3e5, 6e5, 18e5, 36e5, 216e5, 864e5];
  const step = steps.find((s) => (b - a) / s <= 6) || 864e5;
  const out = [];
  for (let t = start + Math.ceil((a - start) / step) * step; t <= b; t += step) {
    const left = LABEL + ((t - a) / (b - a)) * width;
    out.push(el("span", { class: "tl-tick", style: { left: `${left}px` } }, since(t - start)));
  }
  return out;
}

/**
 * Time since the run began: `+250 ms`, `+1.5 s`, `+2 min 30 s`.
 * @param {number} ms
 */
function since(ms) {
  if (ms === 0) return "0";
  if (Math.abs(ms) < 1000) return `+${Math.round(ms)} ms`;
  if (Math.abs(ms) < 60000) return `+${Math.round(ms / 100) / 10} s`;
  return `+${duration(ms)}`;
}

/**
 * One task's row: its id, its bars and its marks.
 * @param {import("../types").TimelineRow} r
 * @param {number} i
 * @param {(t: number) => number} x
 * @param {number} width
 * @param {Kept} k
 * @param {import("./page.js").RunView} V
 */
function rowOf(r, i, x, width, k, V) {
  const open = (/** @type {number} */ seq) => {
    V.setSeq(seq);
    V.openTask(r.task);
  };
  const shown = (/** @type {number} */ from, /** @type {number} */ to) => x(to) >= 0 && x(from) <= width;
  const bars = r.bars
    .filter((b) => shown(b.from, b.to))
    .map((b) => {
      const left = Math.max(-2, x(b.from));
      const right = Math.min(width + 2, x(b.to));
      const long = b.to - b.from < 1000 ? `${b.to - b.from} ms` : duration(b.to - b.from);
      const which =
        b.kind === "attempt" ? `attempt ${b.attempt}` : `${b.kind}${b.attempt ? ` of attempt ${b.attempt}` : ""}`;
      const what = `${which}: ${long}${b.open ? ", still going" : ""}${b.failed ? `, ${b.failed}` : ""}; seq ${b.seqs[0]}–${b.seqs[1]}`;
      return el("button", {
        class: `bar k-${b.kind}${b.failed ? " failed" : ""}${b.open ? " open" : ""}`,
        style: { left: `${LABEL + left}px`, width: `${Math.max(3, right - left)}px` },
        "data-seq": b.seqs[0],
        "data-kind": b.kind,
        "data-attempt": b.attempt,
        "aria-label": `${r.task} ${what}`,
        onclick: () => open(b.seqs[0]),
        onmouseenter: () => say(k, `${r.task}: ${what}`),
        onfocus: () => say(k, `${r.task}: ${what}`),
      });
    });
  const marks = r.marks
    .filter((m) => shown(m.at - (m.duration_ms || 0), m.at))
    .map((m) => {
      const end = x(m.at);
      const start = m.duration_ms ? x(m.at - m.duration_ms) : end;
      const kind = m.kind === "model-called" ? "model-called" : "decision";
      const what = `${m.kind} at seq ${m.seq}: ${m.label}${m.duration_ms !== null ? `, ${m.duration_ms} ms` : ""}`;
      return el("button", {
        class: `tick k-${kind}`,
        style: { left: `${LABEL + start - 1}px`, width: `${Math.max(3, end - start + 2)}px` },
        "data-seq": m.seq,
        "data-kind": m.kind,
        "aria-label": `${r.task} ${what}`,
        onclick: () => open(m.seq),
        onmouseenter: () => say(k, `${r.task}: ${what}`),
        onfocus: () => say(k, `${r.task}: ${what}`),
      });
    });
  return el(
    "div",
    { class: "tl-row", role: "listitem", style: { top: `${i * ROW}px` }, "data-task": r.task },
    el("span", { class: "tl-label", title: r.task }, r.task),
    bars,
    marks,
  );
}

/**
 * Names what the pointer (or the focus) is on.
 * @param {Kept} k
 * @param {string} text
 */
function say(k, text) {
  k.hover.textContent = text;
  k.hover.hidden = false;
}
