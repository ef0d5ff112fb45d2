// The round room: every table of a round at a glance, live (GET /v1/rounds/{id} every
// two seconds): its step, who is awaited and for how long, late seats, calls to the
// director (flagged, sortable by how long they wait), the clock, finished or quarantined.
// Sorts and filters; starts, pauses and resumes the whole round in one act
// (POST /v1/rounds/{id}/start|pause|resume) or one table's clock with the round's token,
// which directs every table; issues the round's spectator link; each row links to its
// table's desk; a duplicate round links its comparison page (compare.js).

import { Api, ApiError, gameIdFromPath, tokenFor } from "./api.js";
import { joined } from "./dom.js";
import { SEATS, title } from "./tiles.js";
import { clockTime, confirmAct, duration, element, plainError, unreachable } from "./console.js";

const roundId = gameIdFromPath();
const token = tokenFor(roundId);
const $ = (id) => document.getElementById(id);
const state = { listing: null, failures: 0 };

function say(text, kind = "info") {
  $("message").textContent = text;
  $("message").dataset.kind = kind;
}

async function get(path, as = "json", init = {}) {
  let response;
  try {
    const headers = { Authorization: `Bearer ${token}`, ...(init.headers || {}) };
    response = await fetch(path, { ...init, headers });
  } catch (_) {
    throw new TypeError("no answer");
  }
  if (!response.ok) {
    let problem = null;
    try { problem = await response.json(); } catch (_) { /* the status says enough */ }
    throw new ApiError(response.status, problem);
  }
  return as === "text" ? response.text() : response.json();
}

const waitedSeconds = (t) => (t.finished || !t.moved_at ? 0 : (Date.now() - new Date(t.moved_at).getTime()) / 1000);
/** How long the table's oldest open call has waited (0: no call). */
const callSeconds = (t) => Math.max(0, ...Object.values(t.calls || {}).map((c) => (Date.now() - new Date(c.at).getTime()) / 1000));

function callCell(t, who) {
  const calls = Object.entries(t.calls || {});
  if (!calls.length) return "–";
  const box = element("div", "", "call-flag");
  for (const [seat, call] of calls) {
    const waited = (Date.now() - new Date(call.at).getTime()) / 1000;
    box.append(element("span", `⚑ ${who(seat)} · ${duration(waited)}${call.reason ? `: “${call.reason}”` : ""}`));
  }
  return box;
}

function cell(label, content) {
  const td = element("td");
  td.dataset.label = label;
  if (typeof content === "string") td.textContent = content;
  else td.append(content);
  return td;
}

function clockCell(t) {
  const box = element("div");
  if (!t.clock || t.finished || t.quarantined || t.clock.held) {
    box.textContent = t.clock?.held ? "not started" : t.clock ? "–" : "no clock";
    return box;
  }
  box.append(element("span", t.clock.paused ? "paused " : "running "));
  const b = element("button", t.clock.paused ? "Resume" : "Pause");
  b.type = "button";
  b.setAttribute("aria-label", `${t.clock.paused ? "Resume" : "Pause"} the clock of table ${t.table}`);
  b.addEventListener("click", () => act([t], t.clock.paused ? "resume_clock" : "pause_clock"));
  box.append(b);
  return box;
}

function render() {
  const listing = state.listing;
  if (!listing) return;
  $("title").textContent = `Round room · ${listing.name || listing.round_id}`;
  document.title = `Charleston · ${listing.name || "round"} room`;
  const c = listing.counts;
  $("counts").textContent = `${c.tables} tables · ${c.finished} finished · ${c.active} playing · ${c.held} not started · ${c.paused} paused · ${c.calls} calling the director · ${c.late_seats} late seat(s) · ${c.quarantined} quarantined`;
  renderGate(listing);
  renderComparisonLink(listing);
  let tables = [...listing.tables];
  if ($("only-late").checked) tables = tables.filter((t) => t.late.length);
  if ($("only-open").checked) tables = tables.filter((t) => !t.finished);
  if ($("only-calls").checked) tables = tables.filter((t) => Object.keys(t.calls || {}).length);
  const sort = $("sort").value;
  if (sort === "waiting") tables.sort((a, b) => waitedSeconds(b) - waitedSeconds(a));
  if (sort === "late") tables.sort((a, b) => b.late.length - a.late.length || a.table - b.table);
  if (sort === "calls") tables.sort((a, b) => callSeconds(b) - callSeconds(a) || a.table - b.table);
  const labels = listing.settings?.labels || [];
  const body = $("tables");
  body.replaceChildren();
  for (const t of tables) {
    const tr = element("tr");
    tr.dataset.table = t.table;
    tr.dataset.late = t.late.length ? "yes" : "no";
    tr.dataset.calling = Object.keys(t.calls || {}).length ? "yes" : "no";
    const label = labels[t.table - 1];
    const name = `Table ${t.table}${label && label !== `Table ${t.table}` ? ` · ${label}` : ""}`;
    const who = (seat) => t.players?.[seat] || title(seat);
    const link = element("a", name);
    link.href = `/desk/${encodeURIComponent(t.game_id)}#token=${encodeURIComponent(token)}`;
    link.setAttribute("aria-label", `${name}: open its desk`);
    const tableCell = element("div");
    tableCell.append(link);
    const named = SEATS.filter((s) => t.players?.[s]);
    if (named.length) tableCell.append(element("span", named.map((s) => `${t.players[s]} (${title(s)})`).join(", "), "players"));
    const waited = waitedSeconds(t);
    const awaited = t.finished || t.quarantined ? "–"
      : t.awaiting.length ? `${joined(t.awaiting.map(who))} · for ${duration(waited)}` : "nobody";
    const status = t.quarantined ? "QUARANTINED" : t.finished ? "finished" : t.clock?.held ? "not started" : "playing";
    const stateCell = cell("State", status);
    if (t.finished && (t.ending || t.ended_reason)) stateCell.append(element("span", t.ending || t.ended_reason, "ending"));
    if (t.finished) stateCell.className = "finished";
    if (t.quarantined) stateCell.className = "bad";
    tr.append(
      cell("Table", tableCell),
      cell("Call", callCell(t, who)),
      cell("Step", t.state_labels.join(" · ") || "–"),
      cell("Awaited", awaited),
      cell("Late", joined(t.late.map(who)) || "–"),
      cell("Clock", clockCell(t)),
      stateCell,
    );
    body.append(tr);
  }
  $("shown").textContent = `Showing ${tables.length} of ${listing.tables.length} tables · updated ${clockTime(new Date().toISOString())}`;
}

async function refresh() {
  try {
    state.listing = await get(`/v1/rounds/${encodeURIComponent(roundId)}`);
    if (state.failures) say("The server answers again.");
    state.failures = 0;
    $("live").textContent = "● live";
    render();
  } catch (error) {
    state.failures += 1;
    $("live").textContent = "○ not updating";
    say(plainError(error, "round"), "error");
    if (!unreachable(error) && error.status < 500) {
      if (!state.listing) document.body.classList.add("broken"); // a wrong link stays wrong
      return false;
    }
  }
  return true;
}

async function act(tables, type) {
  const verb = type === "pause_clock" ? "Pause" : "Resume";
  const which = tables.length === 1 ? `the clock of table ${tables[0].table}` : `every clock of the round (${tables.length} tables)`;
  if (type === "pause_clock" && !(await confirmAct(`${verb} ${which}? No deadline runs until it is resumed; each pause is recorded.`, `${verb} it`))) return;
  let done = 0;
  const refused = [];
  for (const t of tables) {
    const api = new Api(t.game_id, token);
    try {
      await api.command({ type }, "/director/commands");
      done += 1;
    } catch (error) {
      refused.push(`table ${t.table}: ${plainError(error)}`);
    }
  }
  say(`${verb}d ${done} table(s).${refused.length ? ` Not done at ${refused.join("; ")}` : ""}`, refused.length ? "error" : "info");
  await refresh();
}

/** A duplicate round (one deal at every table) links its comparison page. */
function renderComparisonLink(listing) {
  const link = $("comparison-link");
  link.hidden = listing.settings?.deal !== "duplicate";
  link.href = `/compare/${encodeURIComponent(roundId)}#token=${encodeURIComponent(token)}`;
}

/** The start gate of the round, in words: held tables, and when they start. */
function renderGate(listing) {
  const held = listing.tables.filter((t) => t.clock?.held && !t.finished);
  const at = held.map((t) => t.clock.start_at).filter(Boolean).sort()[0];
  $("round-gate").textContent = held.length
    ? `${held.length} table(s) not started${at ? `: they start at ${clockTime(at)}, or when you start them` : ": start them when the room is ready"}.`
    : "";
  $("start-round").hidden = !held.length;
}

/** One act over the whole round: every table in one transaction (all of them or none). */
async function roundAct(act) {
  const words = { start: ["Start every held table now?", "Start them", "started"],
    pause: ["Pause every table's clock at once? No deadline runs until you resume; each table records it.", "Pause the round", "paused"],
    resume: ["Resume every paused table's clock?", "Resume the round", "resumed"] }[act];
  if (act !== "resume" && !(await confirmAct(words[0], words[1]))) return;
  try {
    const answer = await get(`/v1/rounds/${encodeURIComponent(roundId)}/${act}`, "json", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": `web-${crypto.randomUUID()}` },
      body: "{}",
    });
    const left = answer.tables.filter((t) => !t.done).map((t) => `table ${t.table}: ${t.detail}`);
    say(`${title(words[2])} ${answer.done} table(s) at ${clockTime(answer.at)}.${left.length ? ` Not ${words[2]}: ${left.join("; ")}` : ""}`);
  } catch (error) {
    say(plainError(error, "round"), "error");
  }
  await refresh();
}

async function spectatorLink(event, revoke = false) {
  event?.preventDefault();
  const path = `/v1/rounds/${encodeURIComponent(roundId)}/spectator`;
  const box = $("round-spectator-link");
  try {
    if (revoke) {
      if (!(await confirmAct("Revoke the round's spectator link? Whoever watches with it sees nothing more.", "Revoke it"))) return;
      await get(path, "json", { method: "DELETE" });
      box.hidden = true;
      say("The round's spectator link is revoked.");
      return;
    }
    const typed = $("round-spectator-delay").value.trim();
    const delay = Number(typed);
    if (typed && (!Number.isInteger(delay) || delay < 0 || delay > 3600)) return say("Give the delay in whole seconds, 0 to 3600, or leave it empty to keep the round's.", "error");
    if (!(await confirmAct("Issue a new spectator link for the round? Its old link stops working, and its delay becomes every table's.", "Issue it"))) return;
    const answer = await get(path, "json", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(typed ? { delay } : {}),
    });
    box.hidden = false;
    box.replaceChildren(element("p", `The round's spectator link (${answer.live ? "live" : `${duration(answer.delay)} behind`}), shown once:`),
      element("code", `${location.origin}${answer.link}`));
  } catch (error) {
    say(plainError(error, "round"), "error");
  }
}

async function download(format) {
  try {
    const text = await get(`/v1/rounds/${encodeURIComponent(roundId)}/results?format=${format}`, "text");
    const a = element("a");
    a.href = URL.createObjectURL(new Blob([text], { type: format === "csv" ? "text/csv" : "application/json" }));
    a.download = `round-${roundId}.${format}`;
    a.click();
  } catch (error) {
    say(plainError(error, "round"), "error");
  }
}

function start() {
  if (!token) {
    document.body.classList.add("broken");
    say("This page needs the round's link, the one that ends in #token=…. It was shown when the round was created.", "error");
    return;
  }
  for (const id of ["sort", "only-late", "only-open", "only-calls"]) $(id).addEventListener("change", render);
  $("start-round").addEventListener("click", () => roundAct("start"));
  $("pause-all").addEventListener("click", () => roundAct("pause"));
  $("resume-all").addEventListener("click", () => roundAct("resume"));
  $("round-spectator-form").addEventListener("submit", (e) => spectatorLink(e));
  $("round-spectator-revoke").addEventListener("click", () => spectatorLink(null, true));
  $("results-csv").addEventListener("click", (e) => { e.preventDefault(); download("csv"); });
  $("results-json").addEventListener("click", (e) => { e.preventDefault(); download("json"); });
  const loop = async () => {
    const again = await refresh();
    if (again) setTimeout(loop, 2000);
  };
  loop();
  setInterval(render, 1000);
}

start();
