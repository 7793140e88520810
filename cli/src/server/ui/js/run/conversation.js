// @ts-check
// A task's model calls as a conversation: per attempt, each call's figures, the turns it added
// (system prompts and an agent's reminders folded to a line, tool calls as blocks, their results
// right after them, long texts folded) and the model's answer; a search box over all of it.
// The turns come from `GET …/calls?turns=true`, read from the recorded bodies by the same code
// as `runlog show --calls`, whose words head each call.

import { el } from "../dom.js";
import { usd } from "./board.js";

/** A text longer than this is shown folded, its start first. */
const FOLD = 1200;

/** @typedef {import("../types").CallShown} CallShown */
/** @typedef {import("../types").Turn} Turn */
/** @typedef {import("../types").Part} Part */

/**
 * The conversation of `calls` under a heading per attempt, with a search box. `mark` (a call's
 * index) is marked as where two conversations part.
 * @param {CallShown[]} calls
 * @param {{ id?: string, mark?: number | null, search?: boolean }} [opts]
 */
export function conversation(calls, opts = {}) {
  const box = el("div", { class: "conversation", id: opts.id || null });
  /** @type {number | null} */
  let attempt = null;
  callBlocks(calls, opts.mark ?? null).forEach((block, i) => {
    if (calls[i].attempt !== attempt) {
      attempt = calls[i].attempt;
      box.append(el("h3", { class: "attempt" }, `Attempt ${attempt}`));
    }
    box.append(block);
  });
  if (opts.search === false) return box;
  return el("div", {}, searchBox(box), box);
}

/**
 * Each call's block, a tool's result named by the call before it that asked for it.
 * @param {CallShown[]} calls
 * @param {number | null} mark the call marked as where two conversations part
 */
export function callBlocks(calls, mark) {
  /** @type {Map<string, string>} a tool call's name by its id, for its result */
  const tools = new Map();
  return calls.map((c, i) => callBlock(c, tools, i === mark));
}

/**
 * A search box over the turns under `box`.
 * @param {HTMLElement} box
 */
export function searchBox(box) {
  const search = el("input", {
    type: "search",
    class: "conv-search",
    placeholder: "search the conversation",
    "aria-label": "search the conversation",
  });
  const found = el("span", { class: "muted", role: "status", "aria-live": "polite" });
  search.addEventListener("input", () => filter(box, search.value, found));
  return el("p", { class: "conv-tools" }, search, " ", found);
}

/**
 * What a call asked, to tell two calls apart: the turns it sent after those kept, on the model
 * it named (the answer aside).
 * @param {CallShown | undefined} c
 */
export function askedOf(c) {
  return c ? JSON.stringify([c.model, c.turns ? [c.turns.kept, c.turns.added] : c.asked]) : "";
}

/**
 * Shows only the turns that hold `query` (any case), opened; all of them when it is empty.
 * @param {HTMLElement} box
 * @param {string} query
 * @param {HTMLElement} found
 */
function filter(box, query, found) {
  const q = query.trim().toLowerCase();
  let n = 0;
  for (const turn of /** @type {NodeListOf<HTMLElement>} */ (box.querySelectorAll(".turn"))) {
    const hit = !q || (turn.dataset.text || "").includes(q);
    turn.hidden = !hit;
    if (q && hit) {
      n++;
      for (const d of turn.querySelectorAll("details")) d.setAttribute("open", "");
      for (const b of /** @type {NodeListOf<HTMLButtonElement>} */ (turn.querySelectorAll("button.unfold"))) b.click();
    }
  }
  found.textContent = q ? `${n} turn${n === 1 ? "" : "s"} with “${query.trim()}”` : "";
}

/** @param {number | null | undefined} n */
const count = (n) => (n ?? 0).toLocaleString("en");

/**
 * One call: the CLI's line, its figures, what it added and the answer.
 * @param {CallShown} c
 * @param {Map<string, string>} tools
 * @param {boolean} marked
 */
function callBlock(c, tools, marked) {
  const t = c.tokens;
  const figures = [
    ["model", c.model || "no model named"],
    ["input", `${count(t.input)} tokens${t.cache_read ? ` (${count(t.cache_read)} cached)` : ""}`],
    ["output", `${count(t.output)} tokens`],
    ["cost", c.cost_usd === null ? "unpriced" : usd(c.cost_usd)],
    ["first byte", c.first_byte_ms === null ? "" : `${c.first_byte_ms} ms`],
    ["took", `${c.duration_ms} ms`],
  ].filter(([, v]) => v !== "");
  const block = el(
    "section",
    {
      class: `call${marked ? " parted" : ""}`,
      id: `call-${c.seq}`,
      "data-seq": c.seq,
      "data-cost": c.cost_usd ?? "",
      "aria-label": `call ${c.n} of attempt ${c.attempt}, seq ${c.seq}`,
    },
    el("div", { class: "callhead" }, el("b", {}, `${c.seq} `), `${c.stage} call ${c.n}: `, c.headline),
    el(
      "dl",
      { class: "figures" },
      figures.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", { "data-figure": k }, v))),
    ),
  );
  if (marked) block.append(el("p", { class: "conflict parted-note" }, "the two conversations part here"));
  if (c.error) block.append(el("div", { class: "conflict" }, `error: ${c.error}`));
  const said = c.turns;
  if (!said) return block;
  if (said.kept > 0) {
    block.append(
      el(
        "p",
        { class: "kept muted" },
        `${said.kept} earlier turn${said.kept === 1 ? "" : "s"} sent again, as `,
        el("a", { href: `#call-${said.kept_from}` }, `call ${said.kept_from}`),
        " had them",
      ),
    );
  }
  for (const turn of said.added) block.append(turnBlock(turn, tools, "added"));
  for (const turn of said.reply) block.append(turnBlock(turn, tools, "reply"));
  return block;
}

/**
 * One turn, its role beside its parts.
 * @param {Turn} turn
 * @param {Map<string, string>} tools
 * @param {"added" | "reply"} how
 */
function turnBlock(turn, tools, how) {
  const role = turn.role || "user";
  const label = how === "reply" ? `${role} · answer` : `${role} · added by this call`;
  const parts = turn.parts.map((p) => partBlock(p, tools, role));
  const text = turn.parts.map(partText).join("\n").toLowerCase();
  return el(
    "div",
    { class: `turn role-${role} ${how}`, "data-role": role, "data-text": text },
    el("div", { class: "role" }, label),
    parts,
  );
}

/** @param {Part} p */
function partText(p) {
  if (p.part === "tool-call") return `${p.name} ${p.arguments}`;
  if (p.part === "other") return p.of;
  return p.text;
}

/**
 * @param {Part} p
 * @param {Map<string, string>} tools
 * @param {string} role
 */
function partBlock(p, tools, role) {
  switch (p.part) {
    case "text":
      // A system prompt (a developer's, for OpenAI) is long and the same each call: a line,
      // opened on demand.
      return role === "system" || role === "developer"
        ? folded(`${role} prompt`, p.text, "system")
        : textBlock(p.text, "text");
    case "reminder": {
      // Named by its tag, summed up by its first line inside it.
      const [, tag = "", inside = p.text] = p.text.trim().match(/^<([\w -]+)>([\s\S]*)<\/[\w -]+>$/) || [];
      return folded(`${tag || "reminder"}`, inside.trim(), "reminder", p.text);
    }
    case "thinking":
      return folded("thinking", p.text, "thinking");
    case "tool-call": {
      if (p.id) tools.set(p.id, p.name);
      return el(
        "div",
        { class: "tool-call", "data-tool": p.name, "data-call-id": p.id || "" },
        el("div", { class: "tool-name" }, `tool call `, el("b", {}, p.name)),
        textBlock(pretty(p.arguments), "arguments"),
      );
    }
    case "tool-result": {
      const name = p.id ? tools.get(p.id) : undefined;
      return el(
        "div",
        { class: `tool-result${p.error ? " failed" : ""}`, "data-call-id": p.id || "" },
        el("div", { class: "tool-name" }, p.error ? "tool error" : "tool result", name ? ` of ${name}` : ""),
        textBlock(p.text, "result"),
      );
    }
    default:
      return el("div", { class: "muted" }, `[${p.of}]`);
  }
}

/**
 * A tool's arguments, indented when they are JSON.
 * @param {string} text
 */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * A text, its start only when it is long, with a button for the rest.
 * @param {string} text
 * @param {string} kind
 */
function textBlock(text, kind) {
  const pre = el("pre", { class: kind });
  if (text.length <= FOLD) {
    pre.textContent = text;
    return pre;
  }
  pre.textContent = `${text.slice(0, FOLD / 2)}…`;
  const more = el(
    "button",
    {
      class: "unfold",
      onclick: () => {
        pre.textContent = text;
        more.remove();
      },
    },
    `Show all ${text.length.toLocaleString("en")} characters`,
  );
  return el("div", {}, pre, more);
}

/**
 * A text folded to its first line, opened on demand (`whole` when what is shown differs).
 * @param {string} what
 * @param {string} text
 * @param {string} kind
 * @param {string} [whole]
 */
function folded(what, text, kind, whole = text) {
  const first = (text.split("\n").find((l) => l.trim()) || "").trim();
  const line = first.length > 100 ? `${first.slice(0, 100)}…` : first;
  return el(
    "details",
    { class: kind },
    el("summary", {}, `${what}: ${line} (${whole.length.toLocaleString("en")} characters)`),
    el("pre", {}, whole),
  );
}
