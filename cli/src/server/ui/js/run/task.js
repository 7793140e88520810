// @ts-check
// A task's story, and the decisions a person records from the page (approve, reject, reopen,
// roll back, fork): each asked for in a dialog, sent to the API, and shown as it is recorded.

import { api } from "../api.js";
import { $, el, enc, fmt, readinessText, rowLook, showError, statusBadge, when } from "../dom.js";
import { costCell } from "./board.js";
import { conversation } from "./conversation.js";

/** @typedef {import("./page.js").RunView} RunView */

let storyAsked = 0;
/**
 * The story of the task whose id `V.S.selected` holds, in a panel: its facts, the decisions a
 * person may record on it, and every event of it.
 * @param {RunView} V
 * @param {boolean} [focus]
 */
export async function drawTask(V, focus) {
  const id = V.S.selected;
  if (!id || !V.S.board) return;
  const r = V.S.board.rows.find((x) => x.id === id);
  let panel = $("#task-panel");
  if (!panel) {
    panel = el("aside", { class: "panel", id: "task-panel", "aria-label": `task ${id}`, tabindex: -1 });
    document.body.append(panel);
  }
  if (!r) {
    panel.replaceChildren(
      el("p", {}, `${id} is not in the plan at seq ${V.S.seq}`),
      el("button", { onclick: V.closeTask }, "Close"),
    );
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
    [
      "cost",
      r.spend && costCell(r.spend) !== "-"
        ? `${costCell(r.spend)}, ${r.spend.tokens.input + r.spend.tokens.output} tokens`
        : "",
    ],
    ["checkpoints", `${r.checkpoints[0]} of ${r.checkpoints[1]}`],
    ["class", fmt(r.class)],
    ["agent", fmt(r.agent)],
    ["worktree", fmt(r.worktree)],
    ["replaced by", r.replaced_by.join(", ")],
    ["note", r.note || ""],
  ].filter(([, v]) => v !== "" && v !== null);
  const story = el("ol", { class: "story", id: "story" }, el("li", { class: "muted" }, "loading its events…"));
  const calls = el("section", { id: "calls", hidden: true });
  panel.replaceChildren(
    ...[
      el(
        "p",
        { class: "buttons" },
        el("button", { onclick: V.closeTask, "aria-label": "close the task's story" }, "Close (Esc)"),
      ),
      el("h2", {}, `Task ${id}`),
      el(
        "dl",
        {},
        facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
      ),
      controls(V, r),
      calls,
      el("h2", {}, "Story"),
      story,
    ].filter(Boolean),
  );
  if (focus) panel.focus();
  const asked = ++storyAsked;
  /** @type {import("../types").EventsPage} */
  const page = await api(`/v1/runs/${enc(V.run)}/events?task=${enc(id)}`);
  if (asked !== storyAsked) return;
  story.replaceChildren(...page.events.map((/** @type {import("../types").Worded} */ ev) => storyItem(V, ev)));
  if (page.next)
    story.append(el("li", { class: "muted" }, `more events from seq ${page.next}: \`runlog show ${V.run} ${id}\``));
  /** @type {import("../types").CallsView} */
  const made = await api(`/v1/runs/${enc(V.run)}/tasks/${enc(id)}/calls?turns=true`);
  if (asked !== storyAsked || !made.calls.length) return;
  calls.replaceChildren(
    el("h2", {}, `Model calls (${made.calls.length}, ${costCell(made.total)})`),
    ...[compareLinks(V, id, made.calls), conversation(made.calls, { id: "conversation" })].filter(Boolean),
  );
  calls.hidden = false;
}

/**
 * Links to two conversations side by side: the last two attempts of the task, and, in a fork or
 * a rerun, the same task in the run it came from.
 * @param {RunView} V
 * @param {string} task
 * @param {import("../types").CallShown[]} calls
 */
function compareLinks(V, task, calls) {
  const attempts = [...new Set(calls.map((c) => c.attempt))];
  const side = (/** @type {string} */ which, /** @type {string} */ run, /** @type {number | null} */ attempt) =>
    `${which}=${enc(run)}&${which}_task=${enc(task)}${attempt === null ? "" : `&${which}_attempt=${attempt}`}`;
  const links = [];
  if (attempts.length >= 2) {
    const [a, b] = attempts.slice(-2);
    links.push(
      el(
        "a",
        { href: `/compare?${side("left", V.run, a)}&${side("right", V.run, b)}`, id: "compare-attempts" },
        `Attempts ${a} and ${b} side by side`,
      ),
    );
  }
  // A rerun's attempts are numbered as the recording's: the first beside the first.
  const parent = V.S.meta && V.S.meta.fork_of;
  if (parent) {
    links.push(
      el(
        "a",
        {
          href: `/compare?${side("left", parent, attempts[0])}&${side("right", V.run, attempts[0])}`,
          id: "compare-runs",
        },
        `Attempt ${attempts[0]} beside ${parent}'s`,
      ),
    );
  }
  return links.length ? el("p", { class: "controls" }, links) : null;
}

/**
 * @param {RunView} V
 * @param {import("../types").Worded} ev
 */
function storyItem(V, ev) {
  const e = ev.event;
  const head = el("div", {}, el("b", {}, `${ev.seq} `), `${e.type} `, el("span", { class: "muted" }, when(ev.at)));
  const li = el("li", { "data-seq": ev.seq, "data-kind": e.type, class: ev.seq > V.S.seq ? "muted" : null }, head);
  if (e.type === "output-recorded") {
    const pre = el("pre", {}, e.text);
    li.append(el("div", { class: "muted" }, `${e.stream}, attempt ${e.attempt}, ${e.bytes} bytes`), pre);
    if (e.blob) {
      li.append(
        el(
          "button",
          {
            onclick: async (/** @type {any} */ click) => {
              click.target.disabled = true;
              try {
                pre.textContent = await api(`/v1/blobs/${e.blob}`);
                click.target.remove();
              } catch (err) {
                click.target.disabled = false;
                showError(err);
              }
            },
          },
          `Load all ${e.bytes} bytes`,
        ),
      );
    }
    return li;
  }
  if (e.type === "changes-recorded") {
    li.append(
      el(
        "div",
        { class: "muted" },
        `attempt ${e.attempt}: commit ${e.commit.slice(0, 12)}, ${e.files.length} file(s), +${e.insertions} −${e.deletions}`,
      ),
    );
    li.append(el("div", {}, e.files.join(", ")));
    if (e.patch) {
      const diff = el("pre", { class: "diff", "data-attempt": e.attempt, hidden: true });
      li.append(
        diff,
        el(
          "button",
          {
            onclick: async (/** @type {any} */ click) => {
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
          },
          `Show the diff (${e.patch_bytes} bytes)`,
        ),
      );
    }
    return li;
  }
  if (e.type === "merge-conflicted") {
    const then =
      e.rescue == null
        ? "waits for a person (resolve in its worktree, then approve)"
        : `rescue ${e.rescue} resolves it`;
    li.append(el("div", { class: "conflict" }, `did not merge: conflict in ${e.files.join(", ")}; ${then}`));
    return li;
  }
  // Any other event in the words `runlog log` prints for it.
  li.append(el("div", { class: "words" }, ev.words));
  return li;
}

/**
 * A patch, each line marked as added, removed or context (text only: never as HTML).
 * @param {HTMLElement} pre
 * @param {string} text
 */
export function showPatch(pre, text) {
  pre.replaceChildren(
    ...text.split("\n").map((line) => {
      const kind =
        line.startsWith("+") && !line.startsWith("+++")
          ? "add"
          : line.startsWith("-") && !line.startsWith("---")
            ? "del"
            : line.startsWith("@@")
              ? "hunk"
              : null;
      return el("span", { class: kind }, `${line}\n`);
    }),
  );
}

// -- decisions
/**
 * @param {RunView} V
 * @param {any} r
 */
function controls(V, r) {
  const atHead = V.S.seq === V.S.head;
  const box = el("div", { class: "controls" });
  const button = (/** @type {string} */ label, /** @type {string} */ id, /** @type {() => void} */ act) =>
    box.append(
      el(
        "button",
        {
          id,
          onclick: act,
          disabled: !atHead,
          title: atHead ? null : "decisions apply to the head: move the scrubber to the head first",
        },
        label,
      ),
    );
  const gateFailed = r.status === "failed" && r.score !== null;
  if (r.status === "pending-eval" || gateFailed) {
    button("Approve…", "approve", () =>
      decide(
        V,
        "approve",
        r,
        "Approve",
        `Records that you approve ${r.id}, bypassing its eval gate: it becomes done and what waits on it may start.`,
      ),
    );
  }
  if (r.status === "pending-eval") {
    button("Reject…", "reject", () =>
      decide(V, "reject", r, "Reject", `Records that you reject ${r.id}: it fails (dependents stay blocked).`, {
        reason: true,
      }),
    );
    button("Reject and reopen…", "reject-reopen", () =>
      decide(
        V,
        "reject-reopen",
        r,
        "Reject and reopen",
        `Records that you reject ${r.id} and put it back to open: it runs again on resume, with your reason as feedback.`,
        { reason: true },
      ),
    );
  }
  if (r.status === "failed") {
    button("Reopen…", "reopen", () =>
      decide(
        V,
        "reopen",
        r,
        "Reopen",
        `Records that you put ${r.id} back to open (triage): it runs again when the run resumes.`,
      ),
    );
  }
  return box.childElementCount ? box : null;
}

/** Asks for confirmation with `fields` (name always, reason if asked); the answers, or null. */
/**
 * @param {string} title
 * @param {string} text
 * @param {{ reason?: boolean, reasonValue?: string, name?: string, namePlaceholder?: string, answers?: boolean }} [fields]
 * @returns {Promise<{ by: string, reason: string | null, name: string | null, answers: string | null } | null>}
 */
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
    name = el("input", {
      id: "confirm-name",
      value: fields.name,
      placeholder: fields.namePlaceholder || "default: RUN-fork-N",
    });
    inputs.push(el("label", {}, "New run id ", name));
  }
  /** @type {HTMLSelectElement | null} */
  let answers = null;
  if (fields.answers) {
    answers = /** @type {HTMLSelectElement} */ (
      el(
        "select",
        { id: "confirm-answers" },
        el("option", { value: "recorded" }, "recorded: every call from the recording"),
        el("option", { value: "recorded-then-live" }, "recorded, then live from the first call that differs"),
        el("option", { value: "live" }, "live: every call from the provider"),
      )
    );
    inputs.push(el("label", {}, "Model answers ", answers));
  }
  $("#confirm-fields").replaceChildren(...inputs);
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        if (dialog.returnValue !== "ok") return resolve(null);
        localStorage.setItem("runlog-by", by.value.trim());
        resolve({
          by: by.value.trim() || "web",
          reason: reason ? reason.value.trim() : null,
          name: name ? name.value.trim() : null,
          answers: answers ? answers.value : null,
        });
      },
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
  });
}

/**
 * @param {RunView} V
 * @param {"approve" | "reopen" | "reject" | "reject-reopen"} kind
 * @param {any} r
 * @param {string} title
 * @param {string} text
 * @param {{ reason?: boolean }} [fields]
 */
async function decide(V, kind, r, title, text, fields) {
  const answer = await confirmWith(
    `${title} ${r.id}?`,
    `${text} It is appended to run ${V.run} after seq ${V.S.head}; nothing is deleted.`,
    fields,
  );
  if (!answer) return;
  const command = {
    approve: { command: "approve", task: r.id, by: answer.by },
    reopen: { command: "reopen", task: r.id, by: answer.by },
    reject: { command: "reject", task: r.id, by: answer.by, reopen: false, reason: answer.reason },
    "reject-reopen": { command: "reject", task: r.id, by: answer.by, reopen: true, reason: answer.reason },
  }[kind];
  await send(V, command);
}

/**
 * @param {RunView} V
 * @param {object} command
 */
async function send(V, command) {
  try {
    /** @type {import("../types").Recorded} */
    const done = await api(`/v1/runs/${enc(V.run)}/commands`, { method: "POST", body: JSON.stringify(command) });
    await V.catchUp(done.head);
    // What was just recorded is what to see: the head.
    V.setSeq(V.S.head);
  } catch (e) {
    showError(e);
  }
}

/**
 * Asks for a rollback to the seq shown, and records it.
 * @param {RunView} V
 */
export async function rollback(V) {
  const to = V.S.seq;
  const ev = V.S.events[to - 1];
  const answer = await confirmWith(
    `Roll ${V.run} back to seq ${to}?`,
    `Appends a rollback event after seq ${V.S.head} that returns the run to its state after seq ${to} (${ev ? ev.event.type : ""}, ${ev ? when(ev.at) : ""}). Nothing is deleted: events ${to + 1}–${V.S.head} stay in the log and in this timeline.`,
    { reason: true, reasonValue: "rolled back from the web view" },
  );
  if (!answer) return;
  await send(V, { command: "rollback", to_seq: to, reason: answer.reason, by: answer.by });
}

/**
 * Asks for a fork at the seq shown, and opens the new run.
 * @param {RunView} V
 */
export async function fork(V) {
  const at = V.S.seq;
  const answer = await confirmWith(
    `Fork ${V.run} at seq ${at}?`,
    `Records a new run that starts from ${V.run}'s state after seq ${at}; ${V.run} itself is unchanged. Continue the new run with \`runlog resume NEW\`.`,
    { name: "" },
  );
  if (!answer) return;
  try {
    const body = answer.name ? { at, as: answer.name } : { at };
    /** @type {import("../types").Forked} */
    const made = await api(`/v1/runs/${enc(V.run)}/fork`, { method: "POST", body: JSON.stringify(body) });
    location.href = `/runs/${enc(made.run)}`;
  } catch (e) {
    showError(e);
  }
}

/**
 * Asks for a rerun from the seq shown (its model calls answered from the recording), and
 * opens the new run, which the server executes.
 * @param {RunView} V
 */
export async function rerun(V) {
  const at = V.S.seq;
  const answer = await confirmWith(
    `Rerun ${V.run} from seq ${at}?`,
    `Records a new run, forked from ${V.run} after seq ${at}, that the server executes again: agents, tests and evaluators run for real, and each model call is answered from ${V.run}'s recording while it asks what the recorded call asked (nothing is paid). The first call that asks something else is named; with recorded answers its attempt stops there.`,
    { name: "", namePlaceholder: "default: RUN-rerun-N", answers: true },
  );
  if (!answer) return;
  try {
    /** @type {{ at: number, answers: string | null, as?: string }} */
    const body = { at, answers: answer.answers };
    if (answer.name) body.as = answer.name;
    /** @type {import("../types").Executing} */
    const made = await api(`/v1/runs/${enc(V.run)}/rerun`, { method: "POST", body: JSON.stringify(body) });
    location.href = `/runs/${enc(made.run)}`;
  } catch (e) {
    showError(e);
  }
}
