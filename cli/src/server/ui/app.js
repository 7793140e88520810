// runlog's web view. Everything it shows comes from the server's /v1 API, the same answers
// `runlog … --json` gives; it keeps no data of its own. Text from a run (task ids, agent
// output) only ever enters the page as text nodes, never as markup.
"use strict";

const ROW = 24; // a timeline row, px (the CSS's --row)
const NODE_W = 150;
const NODE_H = 22;
const COL_W = 178;
const LANE_H = 30;
const OVERSCAN = 30; // rows drawn beyond the visible ones
const BOARD_ROWS_SHOWN = 2000;

const timings = (window.runlogTimings = {});

const $ = (sel, root = document) => root.querySelector(sel);

/** An element with attributes (`on…` functions become listeners) and children. */
function el(tag, attrs = {}, ...children) {
  const svg = ["svg", "g", "rect", "text", "path", "title"].includes(tag);
  const node = svg
    ? document.createElementNS("http://www.w3.org/2000/svg", tag)
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const enc = encodeURIComponent;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function fmt(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  return JSON.stringify(v);
}

function when(ms) {
  if (ms === null || ms === undefined) return "";
  const d = new Date(ms);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return "";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

function showError(e) {
  const box = $("#error");
  box.textContent = e.hint ? `${e.message}\nhint: ${e.hint}` : String(e.message || e);
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => (box.hidden = true), 12000);
}

function authHeaders() {
  const token = sessionStorage.getItem("runlog-token");
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Asks for a bearer token (the server was started with --token-file). */
function askToken() {
  const dialog = $("#token");
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        sessionStorage.setItem("runlog-token", $("#token-value").value.trim());
        resolve();
      },
      { once: true },
    );
    dialog.showModal();
  });
}

/** A request to the API; an error answer becomes an Error with the server's hint. */
async function api(path, init = {}) {
  const headers = { ...authHeaders() };
  if (init.body) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { ...init, headers });
  if (res.status === 401 && !init.retried) {
    await askToken();
    return api(path, { ...init, retried: true });
  }
  const type = res.headers.get("content-type") || "";
  const body = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const e = new Error(body.error || `${res.status} ${res.statusText}`);
    e.hint = body.hint;
    throw e;
  }
  return body;
}

function crumbs(parts) {
  const nav = $("#crumbs");
  nav.replaceChildren(el("a", { href: "/" }, "runs"), ...parts.flatMap((p) => [" / ", p]));
}

/** A run's outcome: `succeeded`, or `failed: capped failed; downstream blocked`. */
function outcomeText(o) {
  if (o === null || o === undefined || typeof o === "string") return fmt(o);
  return Object.entries(o)
    .map(([k, v]) => {
      const why = v && typeof v === "object" ? Object.entries(v).filter(([, l]) => Array.isArray(l) && l.length).map(([w, l]) => `${l.join(", ")} ${w}`) : [];
      return why.length ? `${k}: ${why.join("; ")}` : k;
    })
    .join("; ");
}

function statusBadge(name, extra = "") {
  return el("span", { class: `status st-${name}` }, extra ? `${name} · ${extra}` : name);
}

function rowLook(row) {
  const blocked = row.readiness && ["blocked", "circuit-open", "budget-spent"].includes(row.readiness.readiness);
  return blocked ? "blocked" : row.status;
}

function readinessText(r) {
  if (!r) return "";
  if (r.readiness === "ready") return "ready";
  if (r.readiness === "waiting") return `waiting on ${r.on.join(", ")}`;
  if (r.readiness === "blocked") return `blocked by ${r.by.join(", ")}`;
  if (r.readiness === "circuit-open") return `blocked: stage ${r.stage}'s circuit is open`;
  if (r.readiness === "budget-spent") return `stopped: ${r.spent}`;
  return fmt(r);
}

/** A table whose columns sort by a click on their heading (and Enter on a focused one). */
function sortableTable(id, columns, rows, rowAttrs) {
  let key = null;
  let dir = 1;
  const body = el("tbody");
  const heads = columns.map((c) =>
    el("th", {
      "data-key": c.key,
      class: c.num ? "num" : null,
      tabindex: 0,
      scope: "col",
      onclick: () => sortBy(c.key),
      onkeydown: (e) => e.key === "Enter" && sortBy(c.key),
    }, c.title),
  );
  function draw() {
    const sorted = key === null ? rows : [...rows].sort((a, b) => {
      const x = columns.find((c) => c.key === key).sort(a);
      const y = columns.find((c) => c.key === key).sort(b);
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
    body.replaceChildren(
      ...sorted.map((r) =>
        el("tr", rowAttrs(r), ...columns.map((c) => el("td", { class: c.num ? "num" : null }, c.cell(r)))),
      ),
    );
    heads.forEach((h) => h.setAttribute("aria-sort", h.dataset.key === key ? (dir > 0 ? "ascending" : "descending") : "none"));
  }
  function sortBy(k) {
    dir = key === k ? -dir : 1;
    key = k;
    draw();
  }
  draw();
  return el("table", { id }, el("thead", {}, el("tr", {}, heads)), body);
}

// ---------------------------------------------------------------------------------------------
// The runs page.

async function runsPage() {
  crumbs([]);
  document.title = "runs · runlog";
  const main = $("#main");
  const filter = el("select", { id: "status-filter", "aria-label": "show runs with status" });
  const holder = el("div");
  main.replaceChildren(
    el("h1", {}, "Runs"),
    el("div", { class: "filters" }, el("label", {}, "Status ", filter), el("span", { class: "muted", id: "runs-count" })),
    holder,
  );
  let rows = [];
  function draw() {
    const chosen = filter.value || "all";
    const statuses = ["all", ...new Set(rows.map((r) => r.status))];
    filter.replaceChildren(...statuses.map((s) => el("option", { value: s, selected: s === chosen }, s)));
    const shown = rows.filter((r) => chosen === "all" || r.status === chosen);
    $("#runs-count").textContent = `${shown.length} of ${rows.length} runs`;
    const columns = [
      { key: "run", title: "Run", sort: (r) => r.run, cell: (r) => el("a", { href: `/runs/${enc(r.run)}` }, r.run) },
      { key: "status", title: "Status", sort: (r) => r.status, cell: (r) => statusBadge(r.status) },
      { key: "outcome", title: "Outcome", sort: (r) => outcomeText(r.outcome), cell: (r) => outcomeText(r.outcome) },
      { key: "events", title: "Events", num: true, sort: (r) => r.events, cell: (r) => r.events },
      { key: "started", title: "Started", sort: (r) => r.started_ms || 0, cell: (r) => when(r.started_ms) },
      { key: "duration", title: "Duration", num: true, sort: (r) => (r.last_ms || 0) - (r.started_ms || 0), cell: (r) => r.started_ms ? duration(r.last_ms - r.started_ms) : "" },
      {
        key: "lineage", title: "Lineage", sort: (r) => r.fork_of || r.sub_project_of || "",
        cell: (r) => el("span", {},
          r.fork_of ? el("span", {}, "fork of ", el("a", { href: `/runs/${enc(r.fork_of)}?at=${r.fork_at}` }, `${r.fork_of}@${r.fork_at}`)) : null,
          r.sub_project_of ? el("span", {}, " sub-project of ", el("a", { href: `/runs/${enc(r.sub_project_of.split("/")[0])}` }, r.sub_project_of)) : null,
        ),
      },
      { key: "workflow", title: "Workflow", sort: (r) => r.workflow || "", cell: (r) => fmt(r.workflow) },
    ];
    holder.replaceChildren(
      sortableTable("runs", columns, shown, (r) => ({ "data-run": r.run, "data-status": r.status, class: r.status === "damaged" ? "flagged" : null })),
    );
    main.dataset.state = "ready";
  }
  filter.addEventListener("change", draw);
  async function load() {
    rows = await api("/v1/runs");
    draw();
  }
  await load();
  // Live runs change by themselves: ask again while the page is in view.
  setInterval(() => {
    if (!document.hidden) load().catch(showError);
  }, 2000);
}

// ---------------------------------------------------------------------------------------------
// A run's page.

/** Every event of a run, page by page, with progress. */
async function allEvents(run, note) {
  const events = [];
  let from = 1;
  let head = 0;
  for (;;) {
    const page = await api(`/v1/runs/${enc(run)}/events?from=${from}`);
    head = page.head;
    events.push(...page.events);
    note(`loading events: ${events.length} of ${head}`);
    if (page.next === null || page.next === undefined) break;
    from = page.next;
  }
  return { events, head };
}

/** One line about an event, its type and task aside. */
function eventSummary(e) {
  if (e.type === "usage-recorded") {
    const u = e.usage;
    const cost = u.cost_usd === null ? "unpriced" : `$${u.cost_usd.toFixed(4)} ${u.cost}`;
    return `attempt ${u.attempt} ${u.stage}${u.model ? ` ${u.model}` : ""}: ${u.tokens.input} in, ${u.tokens.output} out, ${cost}`;
  }
  const parts = [];
  for (const [k, v] of Object.entries(e)) {
    if (k === "type" || k === "task") continue;
    if (k === "spec") {
      parts.push(`${v.id}${v.after.length ? ` after ${v.after.join(",")}` : ""}`);
      continue;
    }
    if (v === null || (Array.isArray(v) && v.length === 0)) continue;
    let text = fmt(v);
    if (text.length > 80) text = `${text.slice(0, 77)}…`;
    parts.push(`${k}=${text}`);
  }
  return parts.join(" ");
}

/** Tasks placed by dependency rank (x) in board order (y), so a group's tasks are adjacent
 *  rows and its box encloses exactly them. */
function layout(rows) {
  const byId = new Map(rows.map((r, i) => [r.id, { ...r, row: i }]));
  const kids = new Map();
  for (const r of rows) if (r.parent && byId.has(r.parent)) (kids.get(r.parent) || kids.set(r.parent, []).get(r.parent)).push(r.id);
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
      cur = cur.parent ? byId.get(cur.parent) : null;
    }
    needs.set(r.id, deps);
  }
  // Rank by an iterative post-order walk (a chain of 10,000 tasks would overflow recursion);
  // a cycle, which the rules refuse anyway, is cut where it is met.
  const rank = new Map();
  const seen = new Set();
  for (const r of rows) {
    if (rank.has(r.id)) continue;
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
  const x = (k) => margin + k * COL_W;
  const y = (i) => 8 + i * LANE_H;
  const boxOf = new Map(boxes.map((b) => [b.id, b]));
  const end = (id) => {
    const b = boxOf.get(id);
    const n = byId.get(id);
    return b ? { x: x(b.hi) + NODE_W + b.pad, row: n.row } : { x: x(rank.get(id)) + NODE_W, row: n.row };
  };
  const edges = [];
  for (const r of rows) {
    if (r.group) continue;
    for (const d of r.after) if (byId.has(d)) edges.push({ from: end(d), to: { x: x(rank.get(r.id)), row: byId.get(r.id).row }, replaced: false });
  }
  for (const r of rows) {
    for (const n of r.replaced_by || []) if (byId.has(n)) edges.push({ from: end(r.id), to: { x: x(rank.get(n) || 0), row: byId.get(n).row }, replaced: true });
  }
  const width = x(Math.max(0, ...rank.values()) + 1) + margin;
  return { rows, rank, boxes, edges, x, y, width, height: y(rows.length) + 8 };
}

function runPage(run) {
  const S = {
    run,
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
  const main = $("#main");
  const note = el("p", { class: "muted", id: "progress" }, "loading…");
  main.replaceChildren(note);
  crumbs([el("span", {}, run)]);
  document.title = `${run} · runlog`;
  start().catch(showError);

  async function start() {
    const t0 = performance.now();
    const [runs, loaded] = await Promise.all([api("/v1/runs"), allEvents(run, (t) => (note.textContent = t))]);
    timings.events_ms = Math.round(performance.now() - t0);
    S.meta = runs.find((r) => r.run === run) || { run };
    S.events = loaded.events;
    S.head = loaded.head;
    const asked = Number(new URLSearchParams(location.search).get("at"));
    S.seq = asked >= 1 && asked <= S.head ? asked : S.head;
    build();
    const t1 = performance.now();
    drawTimeline(true);
    timings.timeline_ms = Math.round(performance.now() - t1);
    await loadState();
    timings.first_render_ms = Math.round(performance.now());
    $("#timings").textContent = `opened with ${S.events.length} events; first render ${timings.first_render_ms} ms (events ${timings.events_ms} ms, timeline ${timings.timeline_ms} ms, graph ${timings.graph_ms} ms)`;
    follow();
  }

  let range;
  let seqText;
  let graphBox;
  let timeline;
  let spacer;
  let tabBody;
  let rollbackButton;
  let forkButton;

  function build() {
    range = el("input", { type: "range", id: "scrubber", min: 1, max: Math.max(1, S.head), value: S.seq, "aria-label": "seq", oninput: () => setSeq(Number(range.value)) });
    seqText = el("output", { id: "seq", for: "scrubber" });
    rollbackButton = el("button", { id: "rollback", onclick: rollback, title: "append a rollback to the state after this seq" }, "Roll back to here…");
    forkButton = el("button", { id: "fork", onclick: fork, title: "start a new run from the state after this seq" }, "Fork from here…");
    const lineage = el("span", {},
      S.meta.fork_of ? el("span", {}, "fork of ", el("a", { href: `/runs/${enc(S.meta.fork_of)}?at=${S.meta.fork_at}` }, `${S.meta.fork_of}@${S.meta.fork_at}`)) : null,
      S.meta.sub_project_of ? el("span", { id: "parent-link" }, " sub-project of ", el("a", { href: `/runs/${enc(S.meta.sub_project_of.split("/")[0])}` }, S.meta.sub_project_of)) : null,
    );
    graphBox = el("div", { class: "pane scroll graph", id: "graph", "aria-label": "task graph" });
    graphBox.addEventListener("scroll", () => requestAnimationFrame(drawGraph));
    spacer = el("div");
    timeline = el("div", { class: "pane scroll timeline", id: "timeline", role: "list", "aria-label": "events" }, spacer);
    timeline.addEventListener("scroll", () => requestAnimationFrame(() => drawTimeline(false)));
    const tabs = ["board", "audit", "supervisor", "diff"].map((t) =>
      el("button", { role: "tab", id: `tab-${t}`, "aria-selected": t === S.tab ? "true" : "false", onclick: () => selectTab(t) }, t[0].toUpperCase() + t.slice(1)),
    );
    tabBody = el("div", { class: "tabpanel", id: "tabpanel", role: "tabpanel" });
    main.replaceChildren(
      el("div", { class: "runhead" },
        el("h1", {}, run),
        el("span", { id: "run-status" }),
        lineage,
        el("span", { class: "muted" }, S.meta.workflow ? `workflow ${S.meta.workflow}` : ""),
      ),
      el("div", { class: "scrubber" },
        el("button", { onclick: () => setSeq(S.seq - 1), "aria-label": "previous event" }, "←"),
        range,
        el("button", { onclick: () => setSeq(S.seq + 1), "aria-label": "next event" }, "→"),
        el("button", { onclick: () => setSeq(S.head), id: "to-head" }, "Head"),
        seqText, rollbackButton, forkButton,
      ),
      el("div", { class: "layout" },
        el("div", {}, graphBox, el("div", { class: "tabs", role: "tablist" }, tabs), tabBody),
        timeline,
      ),
      el("p", { class: "muted", id: "timings" }),
    );
    document.addEventListener("keydown", keys);
    showSeq();
  }

  function keys(e) {
    const tag = (e.target.tagName || "").toLowerCase();
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

  function setSeq(n) {
    const seq = Math.max(1, Math.min(S.head, Math.round(n) || 1));
    if (seq === S.seq) return;
    S.seq = seq;
    showSeq();
    drawTimeline(false, true);
    clearTimeout(setSeq.timer);
    setSeq.timer = setTimeout(() => loadState().catch(showError), 60);
  }

  function showSeq() {
    range.max = Math.max(1, S.head);
    range.value = S.seq;
    const ev = S.events[S.seq - 1];
    seqText.value = `seq ${S.seq} of ${S.head}${ev ? ` · ${when(ev.at)}` : ""}`;
    const url = new URL(location.href);
    if (S.seq === S.head) url.searchParams.delete("at");
    else url.searchParams.set("at", S.seq);
    history.replaceState(null, "", url);
    rollbackButton.disabled = S.seq >= S.head;
  }

  let stateAsked = 0;
  async function loadState() {
    const asked = ++stateAsked;
    const seq = S.seq;
    const t0 = performance.now();
    const b = await api(`/v1/runs/${enc(run)}?at=${seq}`);
    if (asked !== stateAsked) return;
    timings.state_fetch_ms = Math.round(performance.now() - t0);
    // The graph's edges come beside the board: each row gets its `after` and `replaced_by`.
    const links = new Map((b.links || []).map((l) => [l.id, l]));
    for (const r of b.board.rows) {
      const l = links.get(r.id);
      r.after = l ? l.after : [];
      r.replaced_by = l ? l.replaced_by : [];
    }
    S.board = b.board;
    S.children = new Map((b.children || []).map((c) => [c.task, c]));
    S.parent = b.parent;
    S.status = b.status;
    $("#run-status").replaceChildren(statusBadge(b.status));
    const t = performance.now();
    S.layout = layout(S.board.rows);
    drawGraph();
    timings.graph_ms = Math.round(performance.now() - t);
    // The diff keeps what was compared; the other tabs show the scrubbed seq.
    const t1 = performance.now();
    if (S.tab !== "diff") await drawTab();
    timings.tab_ms = Math.round(performance.now() - t1);
    if (S.selected) drawTask();
    main.dataset.seq = String(b.seq);
    main.dataset.state = "ready";
  }

  // -- the graph, drawn for the rows in view only
  function drawGraph() {
    const L = S.layout;
    if (!L) return;
    const top = graphBox.scrollTop;
    const first = Math.max(0, Math.floor(top / LANE_H) - OVERSCAN);
    const last = Math.ceil((top + graphBox.clientHeight) / LANE_H) + OVERSCAN;
    const inView = (a, b) => Math.max(a, b) >= first && Math.min(a, b) <= last;
    const svg = el("svg", { class: "dag", width: L.width, height: L.height, viewBox: `0 0 ${L.width} ${L.height}`, role: "group", "aria-label": `${L.rows.length} tasks` });
    for (const b of L.boxes) {
      if (!inView(b.first, b.last)) continue;
      const row = L.rows[b.first];
      svg.append(
        el("g", { class: `group st-${rowLook(row)}`, "data-group": row.id, "data-status": row.status },
          el("rect", { x: L.x(b.lo) - b.pad, y: L.y(b.first) - 4, width: L.x(b.hi) - L.x(b.lo) + NODE_W + 2 * b.pad, height: L.y(b.last) - L.y(b.first) + NODE_H + 8 }),
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
      svg.append(el("path", { class: e.replaced ? "edge replaced" : "edge", d: `M${e.from.x},${y1} C${mid},${y1} ${mid},${y2} ${e.to.x},${y2}` }));
    }
    for (let i = first; i <= Math.min(last, L.rows.length - 1); i++) {
      const r = L.rows[i];
      if (r.group) continue;
      const look = rowLook(r);
      const label = r.id.length > 20 ? `${r.id.slice(0, 19)}…` : r.id;
      svg.append(
        el("g", {
          class: `node st-${look}${S.selected === r.id ? " selected" : ""}`,
          "data-task": r.id, "data-status": r.status, tabindex: 0, role: "button",
          "aria-label": `${r.id}: ${look}`,
          onclick: () => openTask(r.id),
          onkeydown: (ev) => (ev.key === "Enter" || ev.key === " ") && (ev.preventDefault(), openTask(r.id)),
        },
          el("rect", { x: L.x(L.rank.get(r.id)), y: L.y(i), width: NODE_W, height: NODE_H }),
          el("text", { x: L.x(L.rank.get(r.id)) + 6, y: L.y(i) + 15 }, label),
          el("title", {}, `${r.id}: ${look}${r.description && r.description !== r.id ? ` — ${r.description}` : ""}`),
        ),
      );
    }
    graphBox.replaceChildren(svg);
  }

  // -- the timeline, drawn for the rows in view only
  function drawTimeline(first, keepCurrentInView) {
    spacer.style.height = `${S.events.length * ROW}px`;
    spacer.style.position = "relative";
    if (first || keepCurrentInView) {
      const y = (S.seq - 1) * ROW;
      if (y < timeline.scrollTop || y > timeline.scrollTop + timeline.clientHeight - ROW) timeline.scrollTop = Math.max(0, y - timeline.clientHeight / 2);
    }
    const top = timeline.scrollTop;
    const from = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const to = Math.min(S.events.length, Math.ceil((top + (timeline.clientHeight || 600)) / ROW) + OVERSCAN);
    const rows = [];
    for (let i = from; i < to; i++) {
      const ev = S.events[i];
      const row = el("div", {
        class: `ev${ev.seq > S.seq ? " after" : ""}${ev.seq === S.seq ? " current" : ""}`,
        role: "listitem", "data-seq": ev.seq, "data-kind": ev.event.type,
        title: `${when(ev.at)} ${ev.event.type}`,
        onclick: () => setSeq(ev.seq),
      },
        el("span", { class: "seq" }, ev.seq),
        el("span", { class: "kind" }, ev.event.type),
        ev.event.task ? el("b", {}, `${ev.event.task} `) : null,
        eventSummary(ev.event),
      );
      row.style.top = `${i * ROW}px`;
      rows.push(row);
    }
    spacer.replaceChildren(...rows);
  }

  // -- tabs
  function selectTab(t) {
    S.tab = t;
    for (const b of main.querySelectorAll("[role=tab]")) b.setAttribute("aria-selected", b.id === `tab-${t}` ? "true" : "false");
    drawTab().catch(showError);
  }

  async function drawTab() {
    const draw = { board: drawBoard, audit: drawAudit, supervisor: drawSupervisor, diff: drawDiff }[S.tab];
    const content = await draw();
    if (content) tabBody.replaceChildren(content);
  }

  function drawBoard() {
    const rows = S.board.rows;
    const shown = rows.slice(0, BOARD_ROWS_SHOWN);
    const table = el("table", { id: "board" },
      el("thead", {}, el("tr", {}, ["Task", "Status", "Attempt", "Rescues", "Score", "Cost", "Detail"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, shown.flatMap((r) => [boardRow(r, 0, (e) => (e.preventDefault(), openTask(r.id))), ...childRows(r)])),
    );
    const more = rows.length > shown.length ? el("p", { class: "muted" }, `the first ${shown.length} of ${rows.length} tasks; the graph shows all`) : null;
    return el("div", {}, S.board.paused_for_replan ? el("p", {}, `dispatch paused: replan requested after ${S.board.paused_for_replan}`) : null, costLine(S.board), table, more);
  }

  /** Dollars as runlog shows them: four decimals (agent calls cost fractions of a cent). */
  function usd(x) { return `$${x.toFixed(4)}`; }

  /** A spend in a cell: `$0.0125`, `$0.0125+?` when some usage had no price, `-` for none. */
  function costCell(s) {
    if (!s) return "-";
    const tokens = s.tokens.input + s.tokens.output;
    if (!tokens && !s.unpriced && !s.cost_usd) return "-";
    if (s.unpriced && !s.cost_usd) return "unpriced";
    return s.unpriced ? `${usd(s.cost_usd)}+?` : usd(s.cost_usd);
  }

  /** The run's total and what is left of its budget, above the board. */
  function costLine(board) {
    const s = board.spend;
    if (!s) return null;
    const run = (board.budgets || []).find((b) => b.task === null);
    const tokens = s.tokens.input + s.tokens.output;
    if (!tokens && !s.unpriced && !run) return null;
    const parts = [`cost ${usd(s.cost_usd)}${s.unpriced ? ` + ${s.unpriced} unpriced` : ""}, ${tokens} tokens`];
    if (run) {
      const left = [run.usd_left !== null ? usd(run.usd_left) : null, run.tokens_left !== null ? `${run.tokens_left} tokens` : null].filter(Boolean);
      parts.push(`budget left ${left.join(", ")}`);
    }
    return el("p", { id: "cost", class: run && (run.usd_left === 0 || run.tokens_left === 0) ? "spent" : null }, parts.join("; "));
  }

  function boardRow(r, base, open, run) {
    const depth = base + r.depth;
    return el("tr", { "data-task": r.id, "data-status": r.status, "data-readiness": r.readiness ? r.readiness.readiness : "", "data-run": run || null, class: run ? "child-row" : null },
      el("td", {}, el("a", { href: run ? `/runs/${enc(run)}` : "#", onclick: open }, `${"  ".repeat(depth - 1)}${depth > r.depth ? "└ " : ""}${r.id}`)),
      el("td", {}, statusBadge(rowLook(r) === "blocked" ? "blocked" : r.status)),
      el("td", { class: "num" }, r.attempt),
      el("td", { class: "num" }, r.rescues),
      el("td", { class: "num" }, fmt(r.score)),
      el("td", { class: "num", "data-cost": r.spend ? r.spend.cost_usd : 0 }, costCell(r.spend)),
      el("td", {}, [readinessText(r.readiness), r.failed_children.length ? `failed below: ${r.failed_children.join(", ")}` : "", r.note || ""].filter(Boolean).join("; ")),
    );
  }

  /** A sub-project task's child run, under the task: its tasks, each linking to its page. */
  function childRows(r) {
    const child = S.children && S.children.get(r.id);
    if (!child) return [];
    if (!child.board) return [el("tr", { class: "child-row" }, el("td", { colspan: 7 }, `child run ${child.run}: ${child.error}`))];
    return child.board.rows.map((c) => boardRow(c, r.depth, null, child.run));
  }

  function flagText(f) {
    if (f.flag === "near-threshold") return `near threshold (${f.margin > 0 ? "+" : ""}${f.margin})`;
    if (f.flag === "missing-dimensions") return f.missing.length ? `missing ${f.missing.join(", ")}` : "no dimensions";
    if (f.flag === "approved-over-failing-score") return `approved over failing score by ${f.by} at seq ${f.seq}`;
    return fmt(f);
  }

  function decisionText(d) {
    if (!d) return "";
    if (typeof d === "string") return d;
    if (d.rescue) return `rescue ${d.rescue.n}`;
    return fmt(d);
  }

  function consequenceText(c) {
    if (!c) return "";
    const { consequence, ...rest } = c;
    if (consequence === "done") return rest.ready && rest.ready.length ? `done; ready: ${rest.ready.join(", ")}` : "done";
    if (consequence === "rescue") return `sent back (rescue ${rest.n})`;
    if (consequence === "merge-conflicted") {
      const then = rest.rescue == null ? "it waits for a person" : `rescue ${rest.rescue}`;
      return `merge conflicted (${rest.files.join(", ")}), ${then}`;
    }
    return [consequence, ...Object.entries(rest).map(([k, v]) => `${k} ${fmt(v)}`)].join("; ");
  }

  async function drawAudit() {
    const a = await api(`/v1/runs/${enc(run)}/audit`);
    const entries = a.audit.entries;
    if (!entries.length) return el("p", { class: "muted" }, "no eval decisions in this run");
    const columns = [
      { key: "seq", title: "Seq", num: true, sort: (e) => e.seq, cell: (e) => el("a", { href: "#", onclick: (ev) => (ev.preventDefault(), setSeq(e.seq)) }, e.seq) },
      { key: "task", title: "Task", sort: (e) => e.task, cell: (e) => e.task },
      { key: "attempt", title: "Attempt", num: true, sort: (e) => e.attempt, cell: (e) => e.attempt },
      { key: "score", title: "Score", num: true, sort: (e) => e.score, cell: (e) => fmt(e.score) },
      { key: "dims", title: "Dimensions", sort: (e) => Object.keys(e.dimensions).length, cell: (e) => Object.entries(e.dimensions).map(([k, v]) => `${k} ${fmt(v)}`).join(", ") },
      { key: "threshold", title: "Threshold", num: true, sort: (e) => e.threshold ?? -1, cell: (e) => fmt(e.threshold) },
      { key: "decision", title: "Decision", sort: (e) => decisionText(e.decision), cell: (e) => decisionText(e.decision) },
      { key: "consequence", title: "Consequence", sort: (e) => consequenceText(e.consequence), cell: (e) => consequenceText(e.consequence) + (e.rolled_back ? " (rolled back)" : "") },
      { key: "flags", title: "Flags", sort: (e) => e.flags.length, cell: (e) => e.flags.map(flagText).join("; ") },
    ];
    return sortableTable("audit", columns, entries, (e) => ({
      "data-seq": e.seq, "data-task": e.task,
      "data-flags": e.flags.map((f) => f.flag).join(" "),
      class: e.flags.length ? "flagged" : null,
    }));
  }

  async function drawSupervisor() {
    const [st, sg] = await Promise.all([
      api(`/v1/runs/${enc(run)}/stack?at=${S.seq}`),
      api(`/v1/runs/${enc(run)}/stages?at=${S.seq}`),
    ]);
    const stages = el("table", { id: "stages" },
      el("thead", {}, el("tr", {}, ["Stage", "Runs", "Done", "Failed", "In a row", "Circuit", "Time"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, sg.stages.map((s) =>
        el("tr", { "data-stage": s.stage, class: s.circuit !== "closed" ? "flagged" : null },
          el("td", {}, s.stage), el("td", { class: "num" }, s.executions), el("td", { class: "num" }, s.completions),
          el("td", { class: "num" }, s.failures), el("td", { class: "num" }, s.consecutive_failures),
          el("td", {}, fmt(s.circuit)), el("td", { class: "num" }, duration(s.total_duration_ms)),
        ),
      )),
    );
    const stack = el("table", { id: "stack" },
      el("thead", {}, el("tr", {}, ["Seq", "Stage", "Task", "State", "Retry", "Time", "Error or result"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, st.stack.map((s) =>
        el("tr", {},
          el("td", { class: "num" }, s.seq), el("td", {}, s.stage), el("td", {}, fmt(s.task)), el("td", {}, s.state),
          el("td", { class: "num" }, fmt(s.retry_count)), el("td", { class: "num" }, duration(s.duration_ms)),
          el("td", {}, s.error ? fmt(s.error[0]) : fmt(s.result)),
        ),
      )),
    );
    return el("div", {}, el("h2", {}, "Stage health"), stages, el("h2", {}, `Supervisor stack at seq ${st.seq} (newest first)`), stack);
  }

  function drawDiff() {
    const left = el("input", { id: "diff-left", value: `${run}@${S.seq}`, "aria-label": "left side, RUN or RUN@SEQ" });
    const right = el("input", { id: "diff-right", value: run, "aria-label": "right side, RUN or RUN@SEQ" });
    const out = el("div", { id: "diff-out" });
    async function compare() {
      const d = await api(`/v1/diff?left=${enc(left.value.trim())}&right=${enc(right.value.trim())}`);
      const pair = (p) => (p ? `${fmt(p[0])} → ${fmt(p[1])}` : "");
      out.replaceChildren(
        d.tasks.length
          ? el("table", { id: "diff" },
            el("thead", {}, el("tr", {}, ["Task", "Where", "Status", "Attempts", "Rescues", "Score", "Dimensions", "Replaced by"].map((h) => el("th", { scope: "col" }, h)))),
            el("tbody", {}, d.tasks.map((t) =>
              el("tr", { "data-task": t.task },
                el("td", {}, t.task), el("td", {}, t.presence), el("td", {}, pair(t.status)), el("td", {}, pair(t.attempts)),
                el("td", {}, pair(t.rescues)), el("td", {}, pair(t.score)),
                el("td", {}, Object.entries(t.dimensions || {}).map(([k, v]) => `${k} ${fmt(v.left)} → ${fmt(v.right)}`).join(", ")),
                el("td", {}, (t.replaced_by || []).join(", ")),
              ),
            )))
          : el("p", { class: "muted" }, "no task differs"),
      );
    }
    const parent = S.meta.fork_of
      ? el("button", { onclick: () => { left.value = `${S.meta.fork_of}@${S.meta.fork_at}`; right.value = run; compare().catch(showError); } }, "This fork vs its parent")
      : null;
    return el("div", {},
      el("div", { class: "filters" },
        el("label", {}, "Left ", left), el("label", {}, "Right ", right),
        el("button", { id: "diff-go", onclick: () => compare().catch(showError) }, "Compare"), parent),
      out,
    );
  }

  // -- a task's story
  function openTask(id) {
    S.selected = id;
    drawGraph();
    drawTask(true);
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

  let storyAsked = 0;
  async function drawTask(focus) {
    const id = S.selected;
    const r = S.board.rows.find((x) => x.id === id);
    let panel = $("#task-panel");
    if (!panel) {
      panel = el("aside", { class: "panel", id: "task-panel", "aria-label": `task ${id}`, tabindex: -1 });
      document.body.append(panel);
    }
    if (!r) {
      panel.replaceChildren(el("p", {}, `${id} is not in the plan at seq ${S.seq}`), el("button", { onclick: closeTask }, "Close"));
      return;
    }
    const facts = [
      ["status", statusBadge(rowLook(r) === "blocked" ? "blocked" : r.status)],
      ["readiness", readinessText(r.readiness)],
      ["description", r.description],
      ["after", r.after.join(", ")],
      ["group", r.parent || ""],
      ["attempts", r.attempt],
      ["rescues", r.rescues],
      ["test failures", r.test_failures],
      ["last score", fmt(r.score)],
      ["cost", r.spend && costCell(r.spend) !== "-" ? `${costCell(r.spend)}, ${r.spend.tokens.input + r.spend.tokens.output} tokens` : ""],
      ["checkpoints", `${r.checkpoints[0]} of ${r.checkpoints[1]}`],
      ["class", fmt(r.class)],
      ["agent", fmt(r.agent)],
      ["worktree", fmt(r.worktree)],
      ["replaced by", r.replaced_by.join(", ")],
      ["note", r.note || ""],
    ].filter(([, v]) => v !== "" && v !== null);
    const story = el("ol", { class: "story", id: "story" }, el("li", { class: "muted" }, "loading its events…"));
    panel.replaceChildren(
      ...[el("p", { class: "buttons" }, el("button", { onclick: closeTask, "aria-label": "close the task's story" }, "Close (Esc)")),
      el("h2", {}, `Task ${id}`),
      el("dl", {}, facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
      controls(r),
      el("h2", {}, "Story"),
      story,
    ].filter(Boolean));
    if (focus) panel.focus();
    const asked = ++storyAsked;
    const page = await api(`/v1/runs/${enc(run)}/events?task=${enc(id)}`);
    if (asked !== storyAsked) return;
    story.replaceChildren(...page.events.map((ev) => storyItem(ev)));
    if (page.next) story.append(el("li", { class: "muted" }, `more events from seq ${page.next}: \`runlog show ${run} ${id}\``));
  }

  function storyItem(ev) {
    const e = ev.event;
    const head = el("div", {}, el("b", {}, `${ev.seq} `), `${e.type} `, el("span", { class: "muted" }, when(ev.at)));
    const li = el("li", { "data-seq": ev.seq, "data-kind": e.type, class: ev.seq > S.seq ? "muted" : null }, head);
    if (e.type === "output-recorded") {
      const pre = el("pre", {}, e.text);
      li.append(el("div", { class: "muted" }, `${e.stream}, attempt ${e.attempt}, ${e.bytes} bytes`), pre);
      if (e.blob) {
        li.append(el("button", {
          onclick: async (click) => {
            click.target.disabled = true;
            try {
              pre.textContent = await api(`/v1/blobs/${e.blob}`);
              click.target.remove();
            } catch (err) {
              click.target.disabled = false;
              showError(err);
            }
          },
        }, `Load all ${e.bytes} bytes`));
      }
      return li;
    }
    if (e.type === "changes-recorded") {
      li.append(el("div", { class: "muted" }, `attempt ${e.attempt}: commit ${e.commit.slice(0, 12)}, ${e.files.length} file(s), +${e.insertions} −${e.deletions}`));
      li.append(el("div", {}, e.files.join(", ")));
      if (e.patch) {
        const diff = el("pre", { class: "diff", "data-attempt": e.attempt, hidden: true });
        li.append(diff, el("button", {
          onclick: async (click) => {
            click.target.disabled = true;
            try {
              showPatch(diff, e.blob ? await api(`/v1/blobs/${e.blob}`) : e.patch);
              diff.hidden = false;
              click.target.remove();
            } catch (err) {
              click.target.disabled = false;
              showError(err);
            }
          },
        }, `Show the diff (${e.patch_bytes} bytes)`));
      }
      return li;
    }
    if (e.type === "merge-conflicted") {
      const then = e.rescue == null ? "waits for a person (resolve in its worktree, then approve)" : `rescue ${e.rescue} resolves it`;
      li.append(el("div", { class: "conflict" }, `did not merge: conflict in ${e.files.join(", ")}; ${then}`));
      return li;
    }
    const rest = Object.entries(e).filter(([k, v]) => k !== "type" && k !== "task" && v !== null && !(Array.isArray(v) && !v.length));
    if (rest.length) li.append(el("pre", {}, rest.map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v, null, 1)}`).join("\n")));
    return li;
  }

  /** A patch, each line marked as added, removed or context (text only: never as HTML). */
  function showPatch(pre, text) {
    pre.replaceChildren(...text.split("\n").map((line) => {
      const kind = line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : null;
      return el("span", { class: kind }, `${line}\n`);
    }));
  }

  // -- decisions
  function controls(r) {
    const atHead = S.seq === S.head;
    const box = el("div", { class: "controls" });
    const button = (label, id, act) => box.append(el("button", { id, onclick: act, disabled: !atHead, title: atHead ? null : "decisions apply to the head: move the scrubber to the head first" }, label));
    const gateFailed = r.status === "failed" && r.score !== null;
    if (r.status === "pending-eval" || gateFailed) {
      button("Approve…", "approve", () => decide("approve", r, "Approve", `Records that you approve ${r.id}, bypassing its eval gate: it becomes done and what waits on it may start.`));
    }
    if (r.status === "pending-eval") {
      button("Reject…", "reject", () => decide("reject", r, "Reject", `Records that you reject ${r.id}: it fails (dependents stay blocked).`, { reason: true }));
      button("Reject and reopen…", "reject-reopen", () => decide("reject-reopen", r, "Reject and reopen", `Records that you reject ${r.id} and put it back to open: it runs again on resume, with your reason as feedback.`, { reason: true }));
    }
    if (r.status === "failed") {
      button("Reopen…", "reopen", () => decide("reopen", r, "Reopen", `Records that you put ${r.id} back to open (triage): it runs again when the run resumes.`));
    }
    return box.childElementCount ? box : null;
  }

  /** Asks for confirmation with `fields` (name always, reason if asked); the answers, or null. */
  function confirmWith(title, text, fields = {}) {
    const dialog = $("#confirm");
    $("#confirm-title").textContent = title;
    $("#confirm-text").textContent = text;
    const by = el("input", { id: "confirm-by", value: localStorage.getItem("runlog-by") || "web", required: true });
    const inputs = [el("label", {}, "Recorded as decided by ", by)];
    let reason = null;
    if (fields.reason) {
      reason = el("input", { id: "confirm-reason", value: fields.reasonValue || "", required: true });
      inputs.push(el("label", {}, "Reason ", reason));
    }
    let name = null;
    if (fields.name !== undefined) {
      name = el("input", { id: "confirm-name", value: fields.name, placeholder: "default: RUN-fork-N" });
      inputs.push(el("label", {}, "New run id ", name));
    }
    $("#confirm-fields").replaceChildren(...inputs);
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => {
        if (dialog.returnValue !== "ok") return resolve(null);
        localStorage.setItem("runlog-by", by.value.trim());
        resolve({ by: by.value.trim() || "web", reason: reason ? reason.value.trim() : null, name: name ? name.value.trim() : null });
      }, { once: true });
      dialog.returnValue = "";
      dialog.showModal();
    });
  }

  async function decide(kind, r, title, text, fields) {
    const answer = await confirmWith(`${title} ${r.id}?`, `${text} It is appended to run ${run} after seq ${S.head}; nothing is deleted.`, fields);
    if (!answer) return;
    const command = {
      approve: { command: "approve", task: r.id, by: answer.by },
      reopen: { command: "reopen", task: r.id, by: answer.by },
      reject: { command: "reject", task: r.id, by: answer.by, reopen: false, reason: answer.reason },
      "reject-reopen": { command: "reject", task: r.id, by: answer.by, reopen: true, reason: answer.reason },
    }[kind];
    await send(command);
  }

  async function send(command) {
    try {
      const done = await api(`/v1/runs/${enc(run)}/commands`, { method: "POST", body: JSON.stringify(command) });
      await catchUp(done.head);
      // What was just recorded is what to see: the head.
      setSeq(S.head);
    } catch (e) {
      showError(e);
    }
  }

  async function rollback() {
    const to = S.seq;
    const ev = S.events[to - 1];
    const answer = await confirmWith(
      `Roll ${run} back to seq ${to}?`,
      `Appends a rollback event after seq ${S.head} that returns the run to its state after seq ${to} (${ev ? ev.event.type : ""}, ${ev ? when(ev.at) : ""}). Nothing is deleted: events ${to + 1}–${S.head} stay in the log and in this timeline.`,
      { reason: true, reasonValue: "rolled back from the web view" },
    );
    if (!answer) return;
    await send({ command: "rollback", to_seq: to, reason: answer.reason, by: answer.by });
  }

  async function fork() {
    const at = S.seq;
    const answer = await confirmWith(
      `Fork ${run} at seq ${at}?`,
      `Records a new run that starts from ${run}'s state after seq ${at}; ${run} itself is unchanged. Continue the new run with \`runlog resume NEW\`.`,
      { name: "" },
    );
    if (!answer) return;
    try {
      const body = answer.name ? { at, as: answer.name } : { at };
      const made = await api(`/v1/runs/${enc(run)}/fork`, { method: "POST", body: JSON.stringify(body) });
      location.href = `/runs/${enc(made.run)}`;
    } catch (e) {
      showError(e);
    }
  }

  // -- live: new events from the stream (or by asking, when a stream cannot be held)
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
    drawTimeline(false, wasAtHead);
    clearTimeout(addEvents.timer);
    addEvents.timer = setTimeout(() => loadState().catch(showError), 100);
  }

  /** Reads what was appended up to `head` now, so a decision shows at once. */
  async function catchUp(head) {
    if (head <= S.head) return;
    const page = await api(`/v1/runs/${enc(run)}/events?from=${S.head + 1}`);
    const wasAtHead = S.seq === S.head;
    addEvents(page.events);
    if (wasAtHead) setSeq(S.head);
  }

  async function follow() {
    const live = $("#live");
    for (;;) {
      try {
        const res = await fetch(`/v1/runs/${enc(run)}/stream?from=${S.head + 1}`, { headers: authHeaders() });
        if (!res.ok || !res.body) throw new Error(`stream: ${res.status}`);
        live.hidden = false;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          const batch = [];
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
            if (data) batch.push(JSON.parse(data));
          }
          if (batch.length) addEvents(batch);
        }
      } catch (e) {
        // A stream that cannot be held: ask for new events instead, then try again.
        try {
          await catchUp(Infinity);
        } catch (_) { /* the next round says more */ }
      }
      live.hidden = true;
      await sleep(2000);
    }
  }
}

function route() {
  const m = location.pathname.match(/^\/runs\/([^/]+)\/?$/);
  if (m) runPage(decodeURIComponent(m[1]));
  else runsPage().catch(showError);
}

$("#error").addEventListener("click", () => ($("#error").hidden = true));
route();
