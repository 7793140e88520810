// @ts-check
// The runs page: every run of the store, live.

import { api } from "./api.js";
import { $, crumbs, duration, el, enc, fmt, outcomeText, showError, sortableTable, statusBadge, when } from "./dom.js";

/** Draws the runs page and keeps it current while it is in view. */
export async function runsPage() {
  crumbs([]);
  document.title = "runs · runlog";
  const main = $("#main");
  const filter = el("select", { id: "status-filter", "aria-label": "show runs with status" });
  const holder = el("div");
  main.replaceChildren(
    el("h1", {}, "Runs"),
    el(
      "p",
      {},
      el("a", { href: "/judges", id: "judges-link" }, "Judges"),
      el("span", { class: "muted" }, ": how far each evaluator agrees with people and with what happened"),
    ),
    el(
      "p",
      {},
      el("a", { href: "/experiments", id: "experiments-link" }, "Experiments"),
      el("span", { class: "muted" }, ": recorded runs executed again under variants, compared with the recording"),
    ),
    el(
      "div",
      { class: "filters" },
      el("label", {}, "Status ", filter),
      el("span", { class: "muted", id: "runs-count" }),
    ),
    holder,
  );
  /** @type {import("./types").Row[]} */
  let rows = [];
  function draw() {
    const chosen = filter.value || "all";
    const statuses = ["all", ...new Set(rows.map((r) => r.status))];
    filter.replaceChildren(...statuses.map((s) => el("option", { value: s, selected: s === chosen }, s)));
    const shown = rows.filter((r) => chosen === "all" || r.status === chosen);
    $("#runs-count").textContent = `${shown.length} of ${rows.length} runs`;
    /** @type {import("./dom.js").Column<import("./types").Row>[]} */
    const columns = [
      { key: "run", title: "Run", sort: (r) => r.run, cell: (r) => el("a", { href: `/runs/${enc(r.run)}` }, r.run) },
      { key: "status", title: "Status", sort: (r) => r.status, cell: (r) => statusBadge(r.status) },
      { key: "outcome", title: "Outcome", sort: (r) => outcomeText(r.outcome), cell: (r) => outcomeText(r.outcome) },
      { key: "events", title: "Events", num: true, sort: (r) => r.events, cell: (r) => r.events },
      { key: "started", title: "Started", sort: (r) => r.started_ms || 0, cell: (r) => when(r.started_ms) },
      {
        key: "duration",
        title: "Duration",
        num: true,
        sort: (r) => (r.last_ms || 0) - (r.started_ms || 0),
        cell: (r) => (r.started_ms ? duration((r.last_ms || r.started_ms) - r.started_ms) : ""),
      },
      {
        key: "lineage",
        title: "Lineage",
        sort: (r) => r.fork_of || r.sub_project_of || "",
        cell: (r) =>
          el(
            "span",
            {},
            r.fork_of
              ? el(
                  "span",
                  {},
                  "fork of ",
                  el("a", { href: `/runs/${enc(r.fork_of)}?at=${r.fork_at}` }, `${r.fork_of}@${r.fork_at}`),
                )
              : null,
            r.sub_project_of
              ? el(
                  "span",
                  {},
                  " sub-project of ",
                  el("a", { href: `/runs/${enc(r.sub_project_of.split("/")[0])}` }, r.sub_project_of),
                )
              : null,
          ),
      },
      { key: "workflow", title: "Workflow", sort: (r) => r.workflow || "", cell: (r) => fmt(r.workflow) },
    ];
    holder.replaceChildren(
      sortableTable("runs", columns, shown, (r) => ({
        "data-run": r.run,
        "data-status": r.status,
        class: r.status === "damaged" ? "flagged" : null,
      })),
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
