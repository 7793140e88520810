// @ts-check
// The experiments pages: every experiment (`/experiments`), and one (`/experiments/NAME`):
// its variants as columns and the suite's tasks as rows (each cell the outcome, score and cost
// of that variant's executions, a flip against the recording marked, opening the rerun's task),
// and each variant's pass rate against its cost per task, with the rate's 95% interval. All
// from GET /v1/experiments and GET /v1/experiments/NAME, the answers of `runlog experiment
// show --json`.

import { api } from "./api.js";
import { $, crumbs, el, enc, sortableTable } from "./dom.js";

/** @param {number} x */
const pct = (x) => `${Math.round(x * 100)}%`;
/** @param {number} x */
const usd = (x) => `$${x.toFixed(4)}`;

/** Draws the page: the list of experiments, or one of them. */
export async function experimentsPage() {
  const m = location.pathname.match(/^\/experiments\/([^/]+)\/?$/);
  if (m) return experimentPage(decodeURIComponent(m[1]));
  return listPage();
}

async function listPage() {
  crumbs(["experiments"]);
  document.title = "experiments · runlog";
  /** @type {import("./types").ExperimentRow[]} */
  const rows = await api("/v1/experiments");
  /** @type {import("./dom.js").Column<import("./types").ExperimentRow>[]} */
  const columns = [
    {
      key: "name",
      title: "Experiment",
      sort: (r) => r.name,
      cell: (r) => el("a", { href: `/experiments/${enc(r.name)}` }, r.name),
    },
    { key: "runs", title: "Runs", num: true, sort: (r) => r.runs, cell: (r) => r.runs },
    { key: "variants", title: "Variants", sort: (r) => r.variants.join(", "), cell: (r) => r.variants.join(", ") },
    {
      key: "reruns",
      title: "Reruns",
      num: true,
      sort: (r) => r.progress.ended,
      cell: (r) => `${r.progress.ended}/${r.progress.total}`,
    },
    { key: "live", title: "Live", num: true, sort: (r) => r.progress.live_usd, cell: (r) => usd(r.progress.live_usd) },
    {
      key: "saved",
      title: "From the recording",
      num: true,
      sort: (r) => r.progress.saved_usd,
      cell: (r) => usd(r.progress.saved_usd),
    },
  ];
  $("#main").replaceChildren(
    el("h1", {}, "Experiments"),
    rows.length
      ? sortableTable("experiments", columns, rows, (r) => ({ "data-experiment": r.name }))
      : el("p", {}, "No experiments yet: `runlog experiment run NAME --runs R --variant V=FILE` makes one."),
  );
  $("#main").dataset.state = "ready";
}

/** @param {string} name */
async function experimentPage(name) {
  crumbs([el("a", { href: "/experiments" }, "experiments"), name]);
  document.title = `${name} · experiments · runlog`;
  /** @type {import("./types").ExperimentView} */
  const x = await api(`/v1/experiments/${enc(name)}`);
  const p = x.progress;
  $("#main").replaceChildren(
    el("h1", {}, `Experiment ${x.name}`),
    el(
      "p",
      { class: "muted", id: "experiment-progress" },
      `${x.suite.length} runs, ${p.ended}/${p.total} reruns ended, ${usd(p.live_usd)} live, ${usd(p.saved_usd)} answered from the recording`,
    ),
    chart(x),
    table(x),
    x.skipped.length
      ? el("ul", { id: "skipped" }, ...x.skipped.map((s) => el("li", {}, `${s.run} under ${s.variant}: ${s.reason}`)))
      : "",
  );
  $("#main").dataset.state = "ready";
}

/**
 * Each variant's pass rate (with its interval) against its mean cost per task.
 * @param {import("./types").ExperimentView} x
 */
function chart(x) {
  const [w, h, pad] = [520, 240, 44];
  const variants = x.figures.variants;
  const most = Math.max(...variants.map((v) => v.totals.cost_usd_mean), 1e-9);
  /** @param {number} c */
  const px = (c) => pad + (c / most) * (w - 2 * pad - 80); // room for the names at the right
  /** @param {number} r */
  const py = (r) => h - pad - r * (h - 2 * pad);
  const svg = el(
    "svg",
    { id: "cost-pass", viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": "pass rate against cost per task" },
    el("line", { x1: pad, y1: h - pad, x2: w - pad, y2: h - pad, class: "axis" }),
    el("line", { x1: pad, y1: pad, x2: pad, y2: h - pad, class: "axis" }),
    el("text", { x: w / 2, y: h - 8, "text-anchor": "middle", class: "muted" }, "cost per task (USD)"),
    el("text", { x: 12, y: pad - 12, class: "muted" }, "pass rate"),
  );
  svg.append(
    el("text", { x: pad, y: h - pad + 16, "text-anchor": "middle", class: "muted" }, "$0"),
    el("text", { x: px(most), y: h - pad + 16, "text-anchor": "middle", class: "muted" }, usd(most)),
    el("text", { x: pad - 6, y: py(0) + 4, "text-anchor": "end", class: "muted" }, "0%"),
    el("text", { x: pad - 6, y: py(1) + 4, "text-anchor": "end", class: "muted" }, "100%"),
  );
  // Variants at one place have their names one under another.
  /** @type {Map<string, number>} */
  const at = new Map();
  for (const v of variants) {
    const [cx, cy] = [px(v.totals.cost_usd_mean), py(v.pass_rate.share)];
    const here = `${Math.round(cx)},${Math.round(cy)}`;
    const below = at.get(here) ?? 0;
    at.set(here, below + 1);
    svg.append(
      el(
        "g",
        { class: "point", "data-variant": v.name },
        el("line", { x1: cx, y1: py(v.pass_rate.low), x2: cx, y2: py(v.pass_rate.high), class: "interval" }),
        el("circle", { cx, cy, r: 5 }),
        el("text", { x: cx + 8, y: cy - 6 + below * 14 }, v.name),
        el(
          "title",
          {},
          `${v.name}: pass rate ${pct(v.pass_rate.share)} (95% ${pct(v.pass_rate.low)}–${pct(v.pass_rate.high)}), ${usd(v.totals.cost_usd_mean)} a task`,
        ),
      ),
    );
  }
  return el("figure", {}, svg);
}

/**
 * Tasks as rows, variants as columns.
 * @param {import("./types").ExperimentView} x
 */
function table(x) {
  const names = x.figures.variants.map((v) => v.name);
  const head = el(
    "tr",
    {},
    el("th", {}, "Task"),
    ...x.figures.variants.map((v) =>
      el(
        "th",
        { "data-variant": v.name },
        v.name,
        el("br"),
        el("span", { class: "muted" }, `${pct(v.pass_rate.share)} done`),
      ),
    ),
  );
  const rows = x.figures.tasks.map((t) =>
    el(
      "tr",
      { "data-task": `${t.run}/${t.task}` },
      el("th", { scope: "row" }, `${t.run} / ${t.task}`),
      ...t.cells.map((c, i) => cell(t, c, names[i] ?? "")),
    ),
  );
  return el("table", { id: "experiment-table" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

/**
 * @param {import("./types").TaskRow} t
 * @param {import("./types").Cell} c
 * @param {string} variant
 */
function cell(t, c, variant) {
  const first = c.executions[0];
  const run = first?.rerun ?? t.run;
  const outcome =
    c.done.n === 0
      ? "not ended"
      : c.done.n === 1
        ? c.done.k === 1
          ? "done"
          : "not done"
        : `${c.done.k}/${c.done.n} done`;
  const score = c.mean_score === null ? "" : ` · ${c.mean_score.toFixed(2)}`;
  const mark = c.flip === "fixed" ? "▲ fixed " : c.flip === "broken" ? "▼ broken " : "";
  return el(
    "td",
    { "data-cell": variant, "data-flip": c.flip ?? "", class: c.flip ? `flip-${c.flip}` : "" },
    el("a", { href: `/runs/${enc(run)}?task=${enc(t.task)}` }, `${mark}${outcome}${score} · ${usd(c.cost_usd)}`),
  );
}
