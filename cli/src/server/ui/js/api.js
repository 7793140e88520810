// @ts-check
// The page's one data path: the server's /v1 API, with the token the server asks for.

import { $, enc } from "./dom.js";

/**
 * The bearer token of this tab, if one was given.
 * @returns {Record<string, string>}
 */
export function authHeaders() {
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
        resolve(undefined);
      },
      { once: true },
    );
    dialog.showModal();
  });
}

/**
 * A request to the API; an error answer becomes an Error with the server's hint. `T` is the
 * view the route answers with (types.d.ts, generated from the API's Rust views): the caller
 * names it on what it assigns the answer to, and tsc checks every use against the view.
 * @template T
 * @param {string} path
 * @param {RequestInit & { retried?: boolean }} [init]
 * @returns {Promise<T>}
 */
export async function api(path, init = {}) {
  /** @type {Record<string, string>} */
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
    /** @type {Error & { hint?: string }} */
    const e = new Error(body.error || `${res.status} ${res.statusText}`);
    e.hint = body.hint;
    throw e;
  }
  return body;
}

/**
 * Every event of a run, page by page, with progress.
 * @param {string} run
 * @param {(text: string) => void} note
 * @returns {Promise<{ events: import("./types").Worded[], head: number }>}
 */
export async function allEvents(run, note) {
  /** @type {import("./types").Worded[]} */
  const events = [];
  let from = 1;
  let head = 0;
  for (;;) {
    /** @type {import("./types").EventsPage} */
    const page = await api(`/v1/runs/${enc(run)}/events?from=${from}`);
    head = page.head;
    events.push(...page.events);
    note(`loading events: ${events.length} of ${head}`);
    if (page.next === null || page.next === undefined) break;
    from = page.next;
  }
  return { events, head };
}
