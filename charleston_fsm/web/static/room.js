// The round room: every table of a round at a glance, live (GET /v1/rounds/{id} every
// two seconds): its step, who is awaited and for how long, late seats, the clock, finished
// or quarantined. Sorts and filters; pauses and resumes one table or all of them with the
// round's token, which directs every table; each row links to its table's desk.

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

async function get(path, as = "json") {
  let response;
  try {
    response = await fetch(path, { headers: { Authorization: `Bearer ${token}` } });
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

function cell(label, content) {
  const td = element("td");
  td.dataset.label = label;
  if (typeof content === "string") td.textContent = content;
  else td.append(content);
  return td;
}

function clockCell(t) {
  const box = element("div");
  if (!t.clock || t.finished || t.quarantined) {
    box.textContent = t.clock ? "–" : "no clock";
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
  $("counts").textContent = `${c.tables} tables · ${c.finished} finished · ${c.active} playing · ${c.late_seats} late seat(s) · ${c.quarantined} quarantined`;
  let tables = [...listing.tables];
  if ($("only-late").checked) tables = tables.filter((t) => t.late.length);
  if ($("only-open").checked) tables = tables.filter((t) => !t.finished);
  const sort = $("sort").value;
  if (sort === "waiting") tables.sort((a, b) => waitedSeconds(b) - waitedSeconds(a));
  if (sort === "late") tables.sort((a, b) => b.late.length - a.late.length || a.table - b.table);
  const labels = listing.settings?.labels || [];
  const body = $("tables");
  body.replaceChildren();
  for (const t of tables) {
    const tr = element("tr");
    tr.dataset.table = t.table;
    tr.dataset.late = t.late.length ? "yes" : "no";
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
    const status = t.quarantined ? "QUARANTINED" : t.finished ? "finished" : "playing";
    const stateCell = cell("State", status);
    if (t.finished && (t.ending || t.ended_reason)) stateCell.append(element("span", t.ending || t.ended_reason, "ending"));
    if (t.finished) stateCell.className = "finished";
    if (t.quarantined) stateCell.className = "bad";
    tr.append(
      cell("Table", tableCell),
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
  for (const id of ["sort", "only-late", "only-open"]) $(id).addEventListener("change", render);
  const running = (paused) => (state.listing?.tables || []).filter((t) => t.clock && !t.finished && !t.quarantined && t.clock.paused === paused);
  $("pause-all").addEventListener("click", () => act(running(false), "pause_clock"));
  $("resume-all").addEventListener("click", () => act(running(true), "resume_clock"));
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
