// @ts-check
// The judges pages: every evaluator of the store (`/judges`), and one evaluator
// (`/judges?evaluator=COMMAND`) with its confusion matrix against people, a histogram of its
// scores, the verdicts what happened afterwards contradicted (each linking to the task at its
// verdict, where its diff is), and a what-if threshold: all from GET /v1/judges.

import { api } from "./api.js";
import { $, crumbs, el, enc, sortableTable } from "./dom.js";

/** @param {number | null | undefined} x */
const pct = (x) => (x === null || x === undefined ? "–" : `${Math.round(x * 100)}%`);
/** @param {number | null | undefined} x */
const num = (x) => (x === null || x === undefined ? "–" : x.toFixed(2));

/** @param {import("./types").VerdictRef} v */
function verdictLink(v) {
  return el(
    "a",
    { href: `/runs/${enc(v.run)}?at=${v.seq}&task=${enc(v.task)}`, "data-verdict": `${v.run}/${v.task}/${v.attempt}` },
    `${v.run} ${v.task} attempt ${v.attempt}`,
  );
}

/** Draws the page: the list of evaluators, or one of them. */
export async function judgesPage() {
  const evaluator = new URLSearchParams(location.search).get("evaluator");
  if (evaluator === null) return listPage();
  return evaluatorPage(evaluator);
}

async function listPage() {
  crumbs(["judges"]);
  document.title = "judges · runlog";
  /** @type {[import("./types").JudgesReport, import("./types").Waiting[]]} */
  const [report, waiting] = await Promise.all([api("/v1/judges"), api("/v1/review")]);
  const columns = [
    {
      key: "evaluator",
      title: "Evaluator",
      sort: (/** @type {any} */ e) => e.evaluator,
      cell: (/** @type {any} */ e) => el("a", { href: `/judges?evaluator=${enc(e.evaluator)}` }, e.evaluator),
    },
    {
      key: "verdicts",
      title: "Verdicts",
      num: true,
      sort: (/** @type {any} */ e) => e.verdicts,
      cell: (/** @type {any} */ e) => e.verdicts,
    },
    {
      key: "labels",
      title: "Labels",
      num: true,
      sort: (/** @type {any} */ e) => e.people.n,
      cell: (/** @type {any} */ e) => e.people.n,
    },
    {
      key: "kappa",
      title: "Kappa",
      num: true,
      sort: (/** @type {any} */ e) => e.people.kappa ?? -2,
      cell: (/** @type {any} */ e) => num(e.people.kappa),
    },
    {
      key: "false-pass",
      title: "False passes",
      num: true,
      sort: (/** @type {any} */ e) => e.false_pass.rate ?? -1,
      cell: (/** @type {any} */ e) => pct(e.false_pass.rate),
    },
    {
      key: "false-fail",
      title: "False fails",
      num: true,
      sort: (/** @type {any} */ e) => e.false_fail.rate ?? -1,
      cell: (/** @type {any} */ e) => pct(e.false_fail.rate),
    },
  ];
  $("#main").replaceChildren(
    el("h1", {}, "Judges"),
    el("p", { class: "muted" }, `${report.verdicts} verdicts in ${report.runs} runs`),
    report.evaluators.length
      ? sortableTable("judges", columns, report.evaluators, (/** @type {any} */ e) => ({
          "data-evaluator": e.evaluator,
        }))
      : el("p", {}, "No verdicts yet: an evaluator scores a task whose workflow names `eval`."),
    reviewQueue(waiting),
  );
  $("#main").dataset.state = "ready";
}

/**
 * The verdicts waiting for a person (`[settings] review`): each opens its task, where its
 * score, notes and diff are and where it is approved or rejected.
 * @param {any[]} waiting
 */
function reviewQueue(waiting) {
  return el(
    "section",
    { id: "review-queue" },
    el(
      "h2",
      {},
      waiting.length ? `Waiting for a person's review: ${waiting.length}` : "No verdict waits for a person's review",
    ),
    el(
      "ul",
      {},
      ...waiting.map((w) =>
        el(
          "li",
          { "data-waiting": `${w.run}/${w.task}` },
          el("a", { href: `/runs/${enc(w.run)}?task=${enc(w.task)}` }, `${w.run} ${w.task} attempt ${w.attempt}`),
          `: score ${w.score}, the gate would ${w.decision === "pass" ? "pass" : w.decision?.rescue ? "rescue" : "fail"}`,
          w.notes ? ` (${w.notes.split("\n")[0]})` : "",
        ),
      ),
    ),
  );
}

/** @param {string} evaluator */
async function evaluatorPage(evaluator) {
  crumbs([el("a", { href: "/judges" }, "judges"), evaluator]);
  document.title = `${evaluator} · judges · runlog`;
  /** @type {import("./types").JudgesReport} */
  /** @type {import("./types").JudgesReport} */
  const report = await api(`/v1/judges?evaluator=${enc(evaluator)}`);
  const e = report.evaluators[0];
  if (!e) {
    $("#main").replaceChildren(el("h1", {}, evaluator), el("p", {}, "No verdicts of this evaluator."));
    $("#main").dataset.state = "ready";
    return;
  }
  const p = e.people;
  const matrix = el(
    "table",
    { id: "confusion", class: "matrix" },
    el("tr", {}, el("th", {}, "gate × person"), el("th", {}, "approved"), el("th", {}, "rejected")),
    el(
      "tr",
      {},
      el("th", {}, "pass"),
      el("td", { "data-cell": "both-pass" }, String(p.both_pass)),
      el("td", { "data-cell": "gate-pass-person-fail" }, String(p.gate_pass_person_fail)),
    ),
    el(
      "tr",
      {},
      el("th", {}, "not pass"),
      el("td", { "data-cell": "gate-fail-person-pass" }, String(p.gate_fail_person_pass)),
      el("td", { "data-cell": "both-fail" }, String(p.both_fail)),
    ),
  );
  const most = Math.max(1, ...e.histogram);
  const histogram = el(
    "div",
    { id: "histogram", class: "histogram", role: "img", "aria-label": `scores: ${e.histogram.join(", ")}` },
    ...e.histogram.map((n, i) => {
      const bar = el(
        "div",
        { class: "bar", title: `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}: ${n}` },
        el("span", { class: "count" }, String(n)),
        el("span", { class: "bin" }, (i / 10).toFixed(1)),
      );
      bar.style.setProperty("--share", String(n / most));
      return bar;
    }),
  );
  /** @param {string} title @param {import("./types").Rate} r @param {string} id */
  const contradicted = (title, r, id) =>
    el(
      "section",
      { id },
      el("h2", {}, `${title}: ${r.contradicted} of ${r.of} (${pct(r.rate)})`),
      r.verdicts.length
        ? el("ul", {}, ...r.verdicts.map((v) => el("li", {}, verdictLink(v), ` (${v.decision} ${v.score}): ${v.why}`)))
        : el("p", { class: "muted" }, "none"),
    );
  const slider = el("input", {
    type: "range",
    id: "what-if",
    min: "0",
    max: "1",
    step: "0.01",
    value: String(e.threshold),
    "aria-label": "what-if threshold",
  });
  const sliderValue = el("output", { id: "what-if-value" }, e.threshold.toFixed(2));
  const flips = el("div", { id: "what-if-flips" });
  let asked = 0;
  async function whatIf() {
    const t = Number(slider.value);
    sliderValue.textContent = t.toFixed(2);
    const mine = ++asked;
    /** @type {import("./types").JudgesReport} */
    /** @type {import("./types").JudgesReport} */
    const r = await api(`/v1/judges?evaluator=${enc(evaluator)}&threshold=${t}`);
    if (mine !== asked) return;
    const w = r.evaluators[0]?.what_if;
    if (!w) return;
    flips.replaceChildren(
      el(
        "p",
        { id: "what-if-summary" },
        `${w.passed} passes → ${w.passes_now}; ${w.flips.length} decisions flip (${w.borne_out} borne out by what happened, ${w.gone_against} against it)`,
      ),
      el(
        "ul",
        {},
        ...w.flips.map((f) =>
          el(
            "li",
            { "data-flip": `${f.verdict.run}/${f.verdict.task}/${f.verdict.attempt}` },
            verdictLink(f.verdict),
            ` ${f.verdict.decision} → ${f.now_passes ? "pass" : "not pass"} at ${f.score.toFixed(2)}: ${f.afterwards}`,
          ),
        ),
      ),
    );
    $("#main").dataset.whatIf = String(t);
  }
  slider.addEventListener("input", () => whatIf().catch(() => {}));
  $("#main").replaceChildren(
    el("h1", {}, evaluator),
    el(
      "p",
      { id: "judge-summary" },
      `${e.verdicts} verdicts in ${e.runs} runs: ${e.passes} pass, ${e.rescues} rescue, ${e.fails} fail; mean ${num(e.score_mean)}, sd ${num(e.score_sd)}`,
      e.models.length ? `; model ${e.models.join(", ")}` : "",
      e.versions.length ? `; versions ${e.versions.join(", ")}` : "",
    ),
    el(
      "section",
      {},
      el(
        "h2",
        {},
        `Against people: accuracy ${pct(p.accuracy)}, kappa ${num(p.kappa)} (n ${p.n}); ${p.unlabelled} not looked at`,
      ),
      matrix,
    ),
    el("section", {}, el("h2", {}, "Scores"), histogram),
    contradicted("False passes", e.false_pass, "false-passes"),
    contradicted("False fails", e.false_fail, "false-fails"),
    el("section", {}, el("h2", {}, "What if the threshold were"), el("label", {}, slider, " ", sliderValue), flips),
  );
  $("#main").dataset.state = "ready";
  await whatIf();
}
