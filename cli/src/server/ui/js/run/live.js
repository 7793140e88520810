// @ts-check
// A run's page kept live: new events from the run's event stream, or by asking when a stream
// cannot be held.

import { authHeaders } from "../api.js";
import { $, enc, sleep } from "../dom.js";

/**
 * Follows `run` from after `head()` for as long as the page is open: each batch of events to
 * `addEvents`; when the stream fails, `catchUp` asks for what was missed, then it tries again.
 * @param {string} run
 * @param {() => number} head
 * @param {(list: import("../types").Worded[]) => void} addEvents
 * @param {(head: number) => Promise<void>} catchUp
 */
export async function followStream(run, head, addEvents, catchUp) {
  const live = $("#live");
  for (;;) {
    try {
      const res = await fetch(`/v1/runs/${enc(run)}/stream?from=${head() + 1}`, { headers: authHeaders() });
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
          const data = block
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).replace(/^ /, ""))
            .join("\n");
          if (data) batch.push(JSON.parse(data));
        }
        if (batch.length) addEvents(batch);
      }
    } catch (e) {
      // A stream that cannot be held: ask for new events instead, then try again.
      try {
        await catchUp(Infinity);
      } catch (_) {
        /* the next round says more */
      }
    }
    live.hidden = true;
    await sleep(2000);
  }
}
