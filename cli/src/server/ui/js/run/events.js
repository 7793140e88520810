// @ts-check
// The events pane of a run's page: each event in the words `runlog log` uses, drawn for the
// rows in view only, the seq shown marked and the events after it dimmed.

import { el, when } from "../dom.js";

const ROW = 24; // an event's row, px (the CSS's --row)
const OVERSCAN = 30; // rows drawn beyond the visible ones

/**
 * Draws the rows of `S.events` in view of `box`, inside `spacer` (as tall as every row).
 * @param {{ box: HTMLElement, spacer: HTMLElement }} pane
 * @param {import("./page.js").State} S
 * @param {(seq: number) => void} setSeq what a click on an event does
 * @param {boolean} first
 * @param {boolean} [keepCurrentInView]
 */
export function paintEvents({ box, spacer }, S, setSeq, first, keepCurrentInView) {
  spacer.style.height = `${S.events.length * ROW}px`;
  spacer.style.position = "relative";
  if (first || keepCurrentInView) {
    const y = (S.seq - 1) * ROW;
    if (y < box.scrollTop || y > box.scrollTop + box.clientHeight - ROW)
      box.scrollTop = Math.max(0, y - box.clientHeight / 2);
  }
  const top = box.scrollTop;
  const from = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
  const to = Math.min(S.events.length, Math.ceil((top + (box.clientHeight || 600)) / ROW) + OVERSCAN);
  const rows = [];
  for (let i = from; i < to; i++) {
    const ev = S.events[i];
    const row = el(
      "div",
      {
        class: `ev${ev.seq > S.seq ? " after" : ""}${ev.seq === S.seq ? " current" : ""}`,
        role: "listitem",
        "data-seq": ev.seq,
        "data-kind": ev.event.type,
        title: `${when(ev.at)} ${ev.event.type}: ${ev.words}`,
        onclick: () => setSeq(ev.seq),
      },
      el("span", { class: "seq" }, ev.seq),
      el("span", { class: "kind" }, ev.event.type),
      el("span", { class: "words" }, ev.words),
    );
    row.style.top = `${i * ROW}px`;
    rows.push(row);
  }
  spacer.replaceChildren(...rows);
}
