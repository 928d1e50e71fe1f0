// check_dom.js - reads the DOM that headless Chromium dumped for the daemon's dashboard
// (stdin) and checks that the page drew itself from live data: the GPU graph has samples
// (and saw the device busy), worker cards exist, the waterfall has partition rows with
// stage segments, the budget gauge knows the budget, the poll loop ran. Prints one line per
// check; exits 1 when any fails. Usage: chromium --dump-dom URL | node check_dom.js
"use strict";
const html = require("fs").readFileSync(0, "utf8");
let failed = 0;
function check(desc, ok) {
  console.log((ok ? "ok:   " : "FAIL: ") + desc);
  if (!ok) failed++;
}
// attribute of the first element with the given id
function attr(id, name) {
  const tag = new RegExp("<[a-z]+[^>]*\\bid=\"" + id + "\"[^>]*>").exec(html);
  if (!tag) return undefined;
  const a = new RegExp("\\b" + name + "=\"([^\"]*)\"").exec(tag[0]);
  return a ? a[1] : undefined;
}
const count = (re) => (html.match(re) || []).length;

check("page title", /<title>cuzk dashboard<\/title>/.test(html));
check("poll loop updated the page (body data-updated)", /<body[^>]*data-updated="\d+"/.test(html));
const samples = Number(attr("gpu-graph", "data-samples"));
check("GPU graph drew " + samples + " samples (>= 10)", samples >= 10);
const devices = Number(attr("gpu-graph", "data-devices"));
check("GPU graph has " + devices + " device(s)", devices >= 1);
const busy = Number(attr("gpu-graph", "data-max-busy"));
check("GPU graph shows the device busy at some point (max " + busy + ")", busy > 0);
const cards = Number(attr("workers", "data-cards"));
const cardEls = count(/class="worker-card[^"]*"/g);
check("worker cards: " + cards + " reported, " + cardEls + " drawn", cards > 0 && cardEls === cards);
check("a device worker card", /class="worker-card[^"]*"[^>]*data-kind="device"/.test(html));
const rows = Number(attr("waterfall", "data-rows"));
check("waterfall rows: " + rows, rows > 0 && count(/class="wf-row"/g) === rows);
check("waterfall has stage segments", count(/<div class="st-(synth|device|finalize)"/g) > 0);
const total = Number(attr("budget-gauge", "data-total"));
check("budget gauge knows the budget (" + total + " bytes)", total > 0);
check("host buffer counters drawn (page-locked, takes, reuses)",
      /id="buffers"[^>]*>[\s\S]{0,3000}page-locked[\s\S]{0,3000}takes[\s\S]{0,3000}reuses/.test(html));
const conn = /id="conn"[^>]*>([^<]*)</.exec(html);
check("no 'daemon unreachable' banner", conn && conn[1].trim() === "");
process.exit(failed ? 1 : 0);
