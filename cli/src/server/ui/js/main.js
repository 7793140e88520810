// @ts-check
// runlog's web view. Everything it shows comes from the server's /v1 API, the same answers
// `runlog … --json` gives, and the words it shows for events and eval decisions are the ones
// the server sends (those `runlog log` and `runlog audit` print); it keeps no data of its own.

import { comparePage } from "./compare.js";
import { $, showError } from "./dom.js";
import { experimentsPage } from "./experiments.js";
import { judgesPage } from "./judges.js";
import { runPage } from "./run/page.js";
import { runsPage } from "./runs.js";

function route() {
  const m = location.pathname.match(/^\/runs\/([^/]+)\/?$/);
  if (m) runPage(decodeURIComponent(m[1]));
  else if (location.pathname.replace(/\/$/, "") === "/judges") judgesPage().catch(showError);
  else if (location.pathname.startsWith("/experiments")) experimentsPage().catch(showError);
  else if (location.pathname.replace(/\/$/, "") === "/compare") comparePage().catch(showError);
  else runsPage().catch(showError);
}

$("#error").addEventListener("click", () => ($("#error").hidden = true));
route();
