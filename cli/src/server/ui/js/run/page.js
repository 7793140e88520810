// @ts-check
// A run's page: the scrubber, the task graph, the events pane and the tabs, kept on the seq the
// scrubber shows and live while the run goes on. The tabs and the task's story are modules of
// their own; each gets the page's view (`RunView`) and nothing else.

import { allEvents, api } from "../api.js";
import { $, crumbs, el, enc, showError, statusBadge, timings, when } from "../dom.js";
import { layout } from "../layout.js";
import { drawAudit } from "./audit.js";
import { drawBoard } from "./board.js";
import { drawDiff } from "./diff.js";
import { paintGraph } from "./graph.js";
import { followStream } from "./live.js";
import { drawSupervisor } from "./supervisor.js";
import { drawTask, fork, rerun, rollback } from "./task.js";
import { paintEvents } from "./events.js";
import { drawTimeline } from "./timeline.js";

/**
 * What the page knows of the run, at the seq it shows.
 * @typedef {object} State
 * @property {any} meta the run's line of `GET /v1/runs`
 * @property {import("../types").Worded[]} events every event so far
 * @property {number} head the last seq
 * @property {number} seq the seq shown
 * @property {(Omit<import("../types").Board, "rows"> & { rows: import("../layout.js").GraphRow[] }) | null} board
 *   the board at `seq`, each row with its edges of the task graph
 * @property {Map<string, import("../types").Child>} [children] sub-project tasks' child runs
 * @property {import("../types").ParentLink | null} [parent]
 * @property {string} status
 * @property {ReturnType<typeof layout> | null} layout
 * @property {string} tab
 * @property {string | null} selected the task whose story is open
 */

/**
 * The page as its parts see it.
 * @typedef {object} RunView
 * @property {string} run
 * @property {State} S
 * @property {(n: number) => void} setSeq shows the state after seq `n`
 * @property {(id: string) => void} openTask opens a task's story
 * @property {() => void} closeTask
 * @property {(head: number) => Promise<void>} catchUp reads what was appended up to `head`
 */

/**
 * Draws run `run`'s page.
 * @param {string} run
 */
export function runPage(run) {
  /** @type {State} */
  const S = {
    meta: null,
    events: [],
    head: 0,
    seq: 0,
    board: null,
    status: "",
    layout: null,
    tab: "board",
    selected: null,
  };
  /** @type {RunView} */
  const V = { run, S, setSeq, openTask, closeTask, catchUp };
  const main = $("#main");
  const note = el("p", { class: "muted", id: "progress" }, "loading…");
  main.replaceChildren(note);
  crumbs([el("span", {}, run)]);
  document.title = `${run} · runlog`;
  start().catch(showError);

  async function start() {
    const t0 = performance.now();
    /** @type {[import("../types").Row[], { events: import("../types").Worded[], head: number }]} */
    const [runs, loaded] = await Promise.all([api("/v1/runs"), allEvents(run, (t) => (note.textContent = t))]);
    timings.events_ms = Math.round(performance.now() - t0);
    S.meta = runs.find((/** @type {any} */ r) => r.run === run) || { run };
    S.events = loaded.events;
    S.head = loaded.head;
    const asked = Number(new URLSearchParams(location.search).get("at"));
    S.seq = asked >= 1 && asked <= S.head ? asked : S.head;
    build();
    const t1 = performance.now();
    drawEvents(true);
    timings.events_pane_ms = Math.round(performance.now() - t1);
    await loadState();
    timings.first_render_ms = Math.round(performance.now());
    $("#timings").textContent =
      `opened with ${S.events.length} events; first render ${timings.first_render_ms} ms (events ${timings.events_ms} ms, events pane ${timings.events_pane_ms} ms, graph ${timings.graph_ms} ms)`;
    follow();
    // A link to a verdict (the judges page) opens its task, whose story holds the diff judged.
    const task = new URLSearchParams(location.search).get("task");
    if (task) openTask(task);
  }

  /** @type {any} */
  let range;
  /** @type {any} */
  let seqText;
  /** @type {any} */
  let graphBox;
  /** @type {any} */
  let eventsPane;
  /** @type {any} */
  let spacer;
  /** @type {any} */
  let tabBody;
  /** @type {any} */
  let rollbackButton;

  function build() {
    range = el("input", {
      type: "range",
      id: "scrubber",
      min: 1,
      max: Math.max(1, S.head),
      value: S.seq,
      "aria-label": "seq",
      oninput: () => setSeq(Number(range.value)),
    });
    seqText = el("output", { id: "seq", for: "scrubber" });
    rollbackButton = el(
      "button",
      { id: "rollback", onclick: () => rollback(V), title: "append a rollback to the state after this seq" },
      "Roll back to here…",
    );
    const forkButton = el(
      "button",
      { id: "fork", onclick: () => fork(V), title: "start a new run from the state after this seq" },
      "Fork from here…",
    );
    const rerunButton = el(
      "button",
      {
        id: "rerun",
        onclick: () => rerun(V),
        title: "execute the run again from this seq, its model calls answered from the recording",
      },
      "Rerun from here…",
    );
    const lineage = el(
      "span",
      {},
      S.meta.fork_of
        ? el(
            "span",
            {},
            "fork of ",
            el(
              "a",
              { href: `/runs/${enc(S.meta.fork_of)}?at=${S.meta.fork_at}` },
              `${S.meta.fork_of}@${S.meta.fork_at}`,
            ),
          )
        : null,
      S.meta.sub_project_of
        ? el(
            "span",
            { id: "parent-link" },
            " sub-project of ",
            el("a", { href: `/runs/${enc(S.meta.sub_project_of.split("/")[0])}` }, S.meta.sub_project_of),
          )
        : null,
    );
    graphBox = el("div", { class: "pane scroll graph", id: "graph", "aria-label": "task graph" });
    graphBox.addEventListener("scroll", () => requestAnimationFrame(drawGraph));
    spacer = el("div");
    eventsPane = el("div", { class: "pane scroll events", id: "events", role: "list", "aria-label": "events" }, spacer);
    eventsPane.addEventListener("scroll", () => requestAnimationFrame(() => drawEvents(false)));
    const tabs = ["board", "timeline", "audit", "supervisor", "diff"].map((t) =>
      el(
        "button",
        { role: "tab", id: `tab-${t}`, "aria-selected": t === S.tab ? "true" : "false", onclick: () => selectTab(t) },
        t[0].toUpperCase() + t.slice(1),
      ),
    );
    tabBody = el("div", { class: "tabpanel", id: "tabpanel", role: "tabpanel" });
    main.replaceChildren(
      el(
        "div",
        { class: "runhead" },
        el("h1", {}, run),
        el("span", { id: "run-status" }),
        lineage,
        el("span", { class: "muted" }, S.meta.workflow ? `workflow ${S.meta.workflow}` : ""),
      ),
      el(
        "div",
        { class: "scrubber" },
        el("button", { onclick: () => setSeq(S.seq - 1), "aria-label": "previous event" }, "←"),
        range,
        el("button", { onclick: () => setSeq(S.seq + 1), "aria-label": "next event" }, "→"),
        el("button", { onclick: () => setSeq(S.head), id: "to-head" }, "Head"),
        seqText,
        rollbackButton,
        forkButton,
        rerunButton,
      ),
      el(
        "div",
        { class: "layout" },
        el(
          "div",
          {},
          graphBox,
          el("div", { class: "tabs", role: "tablist", "aria-label": "views of the run" }, tabs),
          tabBody,
        ),
        eventsPane,
      ),
      el("p", { class: "muted", id: "timings" }),
    );
    document.addEventListener("keydown", keys);
    showSeq();
  }

  /** @param {KeyboardEvent} e */
  function keys(e) {
    const target = /** @type {HTMLElement} */ (e.target);
    const tag = (target.tagName || "").toLowerCase();
    if (["input", "textarea", "select"].includes(tag) || $("dialog[open]")) return;
    const step = e.shiftKey ? 10 : 1;
    if (e.key === "ArrowLeft") setSeq(S.seq - step);
    else if (e.key === "ArrowRight") setSeq(S.seq + step);
    else if (e.key === "Home") setSeq(1);
    else if (e.key === "End") setSeq(S.head);
    else if (e.key === "Escape") closeTask();
    else return;
    e.preventDefault();
  }

  let seqTimer = 0;

  /** @param {number} n */
  function setSeq(n) {
    const seq = Math.max(1, Math.min(S.head, Math.round(n) || 1));
    if (seq === S.seq) return;
    S.seq = seq;
    showSeq();
    drawEvents(false, true);
    clearTimeout(seqTimer);
    seqTimer = setTimeout(() => loadState().catch(showError), 60);
  }

  function showSeq() {
    range.max = Math.max(1, S.head);
    range.value = S.seq;
    const ev = S.events[S.seq - 1];
    seqText.value = `seq ${S.seq} of ${S.head}${ev ? ` · ${when(ev.at)}` : ""}`;
    const url = new URL(location.href);
    if (S.seq === S.head) url.searchParams.delete("at");
    else url.searchParams.set("at", String(S.seq));
    history.replaceState(null, "", url);
    rollbackButton.disabled = S.seq >= S.head;
  }

  let stateAsked = 0;
  async function loadState() {
    const asked = ++stateAsked;
    const seq = S.seq;
    const t0 = performance.now();
    /** @type {import("../types").BoardView} */
    const b = await api(`/v1/runs/${enc(run)}?at=${seq}`);
    if (asked !== stateAsked) return;
    timings.state_fetch_ms = Math.round(performance.now() - t0);
    // The graph's edges come beside the board: each row gets its `after` and `replaced_by`.
    const links = new Map(b.links.map((l) => [l.id, l]));
    const rows = b.board.rows.map((r) => {
      const l = links.get(r.id);
      return { ...r, after: l ? l.after : [], replaced_by: l ? l.replaced_by : [] };
    });
    S.board = { ...b.board, rows };
    S.children = new Map(b.children.map((c) => [c.task, c]));
    S.parent = b.parent;
    S.status = b.status;
    $("#run-status").replaceChildren(statusBadge(b.status));
    const t = performance.now();
    S.layout = layout(rows);
    drawGraph();
    timings.graph_ms = Math.round(performance.now() - t);
    // The diff keeps what was compared; the other tabs show the scrubbed seq.
    const t1 = performance.now();
    if (S.tab !== "diff") await drawTab();
    timings.tab_ms = Math.round(performance.now() - t1);
    if (S.selected) drawTask(V);
    main.dataset.seq = String(b.seq);
    main.dataset.state = "ready";
  }

  function drawGraph() {
    paintGraph(graphBox, S, openTask);
  }

  /**
   * @param {boolean} first
   * @param {boolean} [keepCurrentInView]
   */
  function drawEvents(first, keepCurrentInView) {
    paintEvents({ box: eventsPane, spacer }, S, setSeq, first, keepCurrentInView);
  }

  // -- tabs
  /** @param {string} t */
  function selectTab(t) {
    S.tab = t;
    for (const b of main.querySelectorAll("[role=tab]"))
      b.setAttribute("aria-selected", b.id === `tab-${t}` ? "true" : "false");
    const t0 = performance.now();
    drawTab()
      .then(() => (timings.tab_opened_ms = Math.round(performance.now() - t0)))
      .catch(showError);
  }

  async function drawTab() {
    const draw = {
      board: drawBoard,
      timeline: drawTimeline,
      audit: drawAudit,
      supervisor: drawSupervisor,
      diff: drawDiff,
    }[S.tab];
    const content = draw ? await draw(V) : null;
    // A tab that keeps its element (the timeline, with its zoom) is updated in place.
    if (content && tabBody.firstChild !== content) tabBody.replaceChildren(content);
  }

  // -- a task's story
  /** @param {string} id */
  function openTask(id) {
    S.selected = id;
    drawGraph();
    drawTask(V, true);
  }

  function closeTask() {
    const p = $("#task-panel");
    if (p) p.remove();
    if (S.selected) {
      const id = S.selected;
      S.selected = null;
      drawGraph();
      const node = graphBox.querySelector(`[data-task="${CSS.escape(id)}"]`);
      if (node) node.focus();
    }
  }

  // -- live: new events from the stream (or by asking, when a stream cannot be held)
  let addTimer = 0;

  /** @param {import("../types").Worded[]} list */
  function addEvents(list) {
    const wasAtHead = S.seq === S.head;
    for (const ev of list) {
      if (ev.seq !== S.events.length + 1) continue;
      S.events.push(ev);
    }
    if (S.events.length === S.head) return;
    S.head = S.events.length;
    if (wasAtHead) S.seq = S.head;
    showSeq();
    drawEvents(false, wasAtHead);
    clearTimeout(addTimer);
    addTimer = setTimeout(() => loadState().catch(showError), 100);
  }

  /**
   * Reads what was appended up to `head` now, so a decision shows at once.
   * @param {number} head
   */
  async function catchUp(head) {
    if (head <= S.head) return;
    /** @type {import("../types").EventsPage} */
    const page = await api(`/v1/runs/${enc(run)}/events?from=${S.head + 1}`);
    const wasAtHead = S.seq === S.head;
    addEvents(page.events);
    if (wasAtHead) setSeq(S.head);
  }

  function follow() {
    followStream(run, () => S.head, addEvents, catchUp);
  }
}
