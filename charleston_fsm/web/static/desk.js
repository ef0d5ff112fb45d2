// The director's desk: the audit as the page's main content (with "who gave what to
// whom" and a tile's route), the full table, rulings, the clock, the verdict on a
// declaration, and the timeline whose slider replays the table and lights the statechart
// as it was at that seq (GET …/replay?seq=N, …/replay/diagram?seq=N).

import { Api, gameIdFromPath, showLive, tokenFor } from "./api.js";
import { $, joined } from "./dom.js";
import { SEATS, aHand, faceName, tileElement, title } from "./tiles.js";
import { confirmAct, dueText, element, plainError, unreachable } from "./console.js";
import { facesOf, routeOf, timelineRow, transfersTable } from "./desk_audit.js";
import { storyItem, storyOf } from "./desk_story.js";
import { nameSeats, renderRoundTools, wireRoundTools } from "./desk_round.js";

const gameId = gameIdFromPath();
const api = new Api(gameId, tokenFor(gameId));
const state = {
  events: [], lastSeq: 0, shownSeq: null, urls: [], faces: new Map(), audit: null, view: null,
  stepOf: new Map(), ruleset: null, zoom: 1, down: false,
  // each draw of the table takes a number; one that comes back after a later one began paints
  // nothing, so a quick slider or a stream event never leaves an older seq on show
  showing: 0,
};

function say(text, kind = "info") {
  $("message").textContent = text;
  $("message").dataset.kind = kind;
}

/** A failure in words; a server that does not answer is said once, and unsaid when it
 * answers again. */
function fail(error) {
  if (unreachable(error)) state.down = true;
  say(plainError(error), "error");
}

function answered() {
  if (!state.down) return;
  state.down = false;
  say("The server answers again.");
}

/** A seat as the director knows it: "Ann (East)", or "East". */
function seatName(seat) {
  const given = state.view?.game?.players?.[seat] ?? state.audit?.players?.[seat];
  return given ? `${given} (${title(seat)})` : title(seat);
}

/** A chart state's name for people, from the ruleset (its id when unknown). */
const stateName = (id) => state.ruleset?.state_names?.[id] ?? id;

/** The link opens no desk: only the sentence and the way out stay on the page. */
function broken(text, link = null) {
  document.body.classList.add("broken");
  say(text, "error");
  if (link) {
    const a = element("a", link.text);
    a.href = link.href;
    $("message").append(" ", a);
  }
}

function tiles(list) {
  const box = element("div", "", "seat-tiles");
  for (const t of list) {
    const el = tileElement(t, { tag: "span" });
    el.classList.add("small-tile");
    box.append(el);
  }
  return box;
}

/** The header: the round and the table number (when the game is a table of a round),
 * the ruleset, and the players. */
function renderHeader(view) {
  const g = view.game;
  const round = state.audit?.round;
  const table = round
    ? `Table ${round.table}${round.label && round.label !== `Table ${round.table}` ? ` (${round.label})` : ""} of ${round.name || "the round"}`
    : "A single game";
  const rules = state.ruleset?.title ?? g.ruleset;
  $("where").textContent = `${table} · ${rules}`;
  $("players").textContent = `Players: ${joined(SEATS.map(seatName))}`;
  for (const option of $("ruling-seat").options) if (option.value) option.textContent = seatName(option.value);
  for (const option of $("filter-seat").options) if (option.value) option.textContent = seatName(option.value);
  document.title = `Charleston · desk · ${round ? `table ${round.table}` : "game"}`;
}

function renderFacts(view, seq) {
  const g = view.game;
  renderHeader(view);
  const facts = $("facts");
  facts.replaceChildren(element("h2", seq === null ? "The table now" : `The table at seq ${seq}`));
  const where = g.phase === "pass" || g.phase === "courtesy" ? `pass ${g.pass_number} of ${g.pass_total}: ` : "";
  const lines = [
    `Now: ${where}${g.state_labels.join(" · ") || g.state.join(" · ")}`,
    `Passes resolved: ${g.passes_resolved} · wall: ${view.wall.count} tiles`,
  ];
  for (const step of g.steps) {
    lines.push(`${step.label}: ready ${joined(step.confirmed.map(seatName)) || "nobody"}; waiting for ${joined(step.awaiting.map(seatName)) || "nobody"}`);
  }
  if (g.votes && Object.keys(g.votes).length) lines.push(`Votes: ${Object.entries(g.votes).map(([s, c]) => `${seatName(s)} ${c}`).join(", ")}`);
  if (Object.keys(view.courtesy_agreed).length) lines.push(`Courtesy agreed: ${Object.entries(view.courtesy_agreed).map(([p, n]) => `${joined(p.split("-").map(seatName))} ${n}`).join("; ")}`);
  if (g.declaration) {
    const d = g.declaration;
    lines.push(`${seatName(d.seat)} declared ${aHand(d.kind)}: ${d.judged ? `judged ${d.verdict} by the director` : d.verdict}`);
  }
  if (g.ding_dong) lines.push(`Ding Dong: ${g.ding_dong.requested} of ${g.ding_dong.max}${g.ding_dong.ready ? `, ${seatName(g.ding_dong.ready)} Ready` : ""}${g.ding_dong.closed ? ", closed" : ""}`);
  if (g.finished) lines.push(`Over: ${g.ending?.text ?? g.ended_reason ?? "complete"}`);
  for (const line of lines) facts.append(element("p", line));
  $("diagram-now").textContent = `${seq === null ? "Now" : `At seq ${seq}`}: ${g.state_labels.join("; ") || g.state.join(", ")}`;
}

function renderSeats(view) {
  const g = view.game;
  const clock = view.clock;
  const seats = $("seats");
  seats.replaceChildren();
  for (const seat of SEATS) {
    const s = view.seats[seat];
    const card = element("div", "", "card seat-card");
    card.dataset.seat = seat;
    const offer = s.offer !== null && s.offer !== undefined ? ` · offers ${s.offer}` : "";
    card.append(element("h3", `${seatName(seat)} · ${g.hand_sizes[seat]} tiles${offer}`));
    const deadline = clock?.deadlines?.[seat];
    const late = clock?.late?.includes(seat);
    const status = element("p", "", "seat-clock");
    status.dataset.late = late ? "yes" : "no";
    if (late) status.append(element("span", "LATE", "late-flag"), " ");
    if (deadline) {
      status.append(`${deadline.kind.replaceAll("_", " ")}: ${clock.paused ? "clock paused" : dueText(deadline.due_at)}`);
    } else {
      status.append(clock ? "nothing awaited" : "no clock");
    }
    card.append(status, tiles(s.rack));
    if (s.received.length) card.append(element("p", "Received, not placed:", "muted"), tiles(s.received));
    if (s.selection) {
      const sel = s.selection;
      card.append(element("p", `Chosen, locked${sel.blind ? ` (+${sel.blind} blind)` : ""}${sel.to ? ` to ${joined(sel.to.map(seatName))}` : ""}:`, "muted"), tiles(sel.tiles));
    }
    seats.append(card);
  }
}

/** How the bots of a table with no clock play, in words ("" when no bot plays). */
function botPace(clock) {
  if (!clock?.bots?.length) return "";
  return clock.pace ? ` (its bots think about ${clock.pace} s over each move)` : " (its bots act at once)";
}

function renderTools(view) {
  const g = view.game;
  const clock = view.clock;
  const timed = clock && clock.options;
  $("clock-state").textContent = !timed ? `This game has no clock${botPace(clock)}.` : clock.paused ? "The clock is paused." : "The clock is running.";
  $("pause").hidden = !timed || clock.paused;
  $("resume").hidden = !timed || !clock.paused;
  $("close-ding-dong").hidden = !(g.ding_dong && !g.ding_dong.closed && !g.finished);
  const d = g.declaration;
  const pending = d && !d.judged && !(d.kind === "heavenly" && !g.finished);
  $("judge-form").hidden = !pending;
  if (pending) $("judge-what").textContent = `${seatName(d.seat)} declared ${aHand(d.kind)}: judge it against the card.`;
}

function renderView(view, seq) {
  renderFacts(view, seq);
  renderSeats(view);
  if (seq === null) {
    state.view = view;
    renderTools(view);
    renderRoundTools(view);
  }
}

/** Which pass each row belongs to: its own step, else the state the table was in (the
 * record's first move names the state it left, the view the state it is in: no state id
 * is assumed here). */
function assignSteps() {
  const moved = state.events.find((e) => e.type === "state_changed");
  let current = moved?.payload?.from?.at(-1) ?? state.view?.game?.state?.at(-1) ?? "";
  for (const e of state.events) {
    if (e.type === "state_changed") {
      state.stepOf.set(e.seq, current);
      current = (e.payload.to || []).at(-1) || current;
      continue;
    }
    state.stepOf.set(e.seq, e.payload?.step || current);
  }
  const select = $("filter-pass");
  const chosen = select.value;
  const labels = new Map((state.audit?.passes || []).map((p) => [p.step, p.label]));
  const steps = [...new Set(state.stepOf.values())];
  select.replaceChildren(element("option", "every pass"));
  select.firstChild.value = "";
  for (const step of steps) {
    const o = element("option", labels.get(step) || step);
    o.value = step;
    select.append(o);
  }
  select.value = steps.includes(chosen) ? chosen : "";
}

function renderTimeline() {
  const list = $("timeline");
  const seat = $("filter-seat").value;
  const step = $("filter-pass").value;
  list.replaceChildren();
  for (const e of state.events) {
    if (seat && e.seat !== seat && e.payload?.receiver !== seat) continue;
    if (step && state.stepOf.get(e.seq) !== step) continue;
    const li = timelineRow(e, state.faces, showAt, seatName);
    if (e.seq === state.shownSeq) {
      li.classList.add("current");
      li.firstChild.setAttribute("aria-current", "step");
    }
    list.append(li);
  }
  const slider = $("slider");
  slider.max = String(Math.max(1, state.lastSeq));
  if ($("follow").checked) slider.value = String(state.lastSeq);
}

/** The statechart's SVG now (seq null) or as it stood at seq. */
function diagramAt(seq) {
  return api.get(seq === null ? "/diagram?format=svg" : `/replay/diagram?format=svg&seq=${seq}`, "text");
}

function paintDiagram(seq, svg) {
  const box = $("diagram");
  box.innerHTML = svg;
  box.dataset.seq = seq === null ? "live" : String(seq);
  const svgEl = box.querySelector("svg");
  if (svgEl) {
    svgEl.setAttribute("role", "img");
    svgEl.setAttribute("aria-label", `${seq === null ? "The statechart now" : `The statechart at seq ${seq}`}: ${$("diagram-now").textContent}`);
    applyZoom();
  }
  $("diagram-at").textContent = seq === null ? "(live)" : `(at seq ${seq})`;
  const lit = box.querySelector("svg .active");
  if (lit) box.scrollTop += lit.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3;
}

async function showAt(seq) {
  $("follow").checked = seq >= state.lastSeq;
  $("slider").value = String(seq);
  $("seq-out").textContent = String(seq);
  try {
    const mine = ++state.showing;
    const [answer, svg] = await Promise.all([api.get(`/replay?seq=${seq}`), diagramAt(seq)]);
    if (mine !== state.showing) return; // the slider moved on meanwhile
    state.shownSeq = seq;
    renderView(answer.view, seq);
    renderTimeline();
    paintDiagram(seq, svg);
    document.body.dataset.replaySeq = String(seq);
  } catch (error) {
    fail(error);
  }
}

async function refresh() {
  try {
    const listing = await api.get(`/events?after=${state.lastSeq}`);
    answered();
    // two refreshes can overlap (the stream's and a command's): keep each row once
    state.events.push(...listing.events.filter((e) => e.seq > state.lastSeq));
    state.lastSeq = Math.max(state.lastSeq, listing.last_seq);
    if (!state.faces.size) state.faces = facesOf((await api.get("/replay?seq=1")).view);
    await loadAudit();
    assignSteps();
    const now = await api.get();
    state.view = now.view; // the story's last end says how the table ended, by this view
    renderStory();
    if ($("follow").checked) {
      const mine = ++state.showing;
      const svg = await diagramAt(null);
      if (mine !== state.showing) return; // a move of the slider owns the table now
      state.shownSeq = state.lastSeq;
      $("seq-out").textContent = String(state.lastSeq);
      renderView(now.view, null);
      paintDiagram(null, svg);
      document.body.dataset.replaySeq = String(state.lastSeq);
    } else {
      renderTools(now.view);
      renderRoundTools(now.view);
    }
    renderTimeline();
  } catch (error) {
    fail(error);
  }
}

/** The statechart at a readable size: its own width times the zoom ("Fit": the box's). */
function applyZoom() {
  const svg = $("diagram").querySelector("svg");
  if (!svg) return;
  const natural = svg.viewBox?.baseVal?.width || svg.getBoundingClientRect().width || 800;
  svg.style.maxWidth = "none";
  svg.style.width = state.zoom === "fit" ? "100%" : `${Math.round(natural * state.zoom)}px`;
  svg.style.height = "auto";
  $("zoom-level").textContent = state.zoom === "fit" ? "fitted to the width" : `${Math.round(state.zoom * 100)}%`;
}

function zoom(by) {
  const now = state.zoom === "fit" ? 1 : state.zoom;
  state.zoom = by === "fit" ? "fit" : Math.min(3, Math.max(0.4, Math.round(now * by * 20) / 20));
  applyZoom();
}

function renderStory() {
  const g = state.view?.game;
  const lines = storyOf(state.events, state.faces, seatName, stateName, g?.finished ? g.ending?.text : null);
  const list = $("audit");
  const key = `${lines.length}|${lines.findLast((l) => l.kind === "end")?.text ?? ""}`;
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.replaceChildren(...lines.map(storyItem));
}

function renderTransfers() {
  const passes = state.audit?.passes || [];
  const select = $("route-pass");
  const chosen = select.value;
  // a refresh (every event of a live table) rebuilds nothing it already shows: the
  // director's open list, focused tile or click in flight is kept (a resolved pass's
  // transfers never change, so its number and the tiles' faces say what is shown)
  const listed = passes.map((p) => `${p.number}:${p.label}:${p.transfers.length}`).join("|");
  if (select.dataset.listed !== listed) {
    select.dataset.listed = listed;
    select.replaceChildren();
    for (const p of passes) {
      const o = element("option", p.label);
      o.value = String(p.number);
      select.append(o);
    }
    if (!passes.length) select.append(element("option", "no pass yet"));
    select.value = passes.some((p) => String(p.number) === chosen) ? chosen : String(passes.at(-1)?.number ?? "");
  }
  const pass = passes.find((p) => String(p.number) === select.value);
  const shown = `${listed}|${select.value}|${state.faces.size}`;
  const box = $("transfers");
  if (box.dataset.shown === shown) return;
  box.dataset.shown = shown;
  box.replaceChildren(pass ? transfersTable(pass, state.faces, showRoute, seatName) : element("p", "No pass has resolved yet.", "muted"));
}

function showRoute(tile) {
  const legs = routeOf(tile, state.audit?.passes || [], seatName);
  const face = state.faces.get(tile) || "?";
  const name = faceName(face);
  $("route").textContent = legs.length
    ? `${name} (tile ${face}#${tile}): ${legs.join(" · then ")}.`
    : `${name} (tile ${face}#${tile}) never moved.`;
}

async function loadAudit() {
  const [json, text] = await Promise.all([api.get("/audit"), api.get("/audit?format=text", "text")]);
  state.audit = json;
  for (const url of state.urls) URL.revokeObjectURL(url);
  const jsonUrl = URL.createObjectURL(new Blob([JSON.stringify(json, null, 2)], { type: "application/json" }));
  const textUrl = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  state.urls = [jsonUrl, textUrl];
  $("audit-json").href = jsonUrl;
  $("audit-json").download = `audit-${gameId}.json`;
  $("audit-text").href = textUrl;
  $("audit-text").download = `audit-${gameId}.txt`;
  renderTransfers();
}

async function direct(command, done) {
  try {
    await api.command(command, "/director/commands");
    say(done);
    await refresh();
    return true;
  } catch (error) {
    fail(error);
    return false;
  }
}

let timer = null;
const refreshSoon = () => {
  clearTimeout(timer);
  timer = setTimeout(refresh, 150);
};

function wire() {
  $("slider").addEventListener("input", () => showAt(Number($("slider").value)));
  $("follow").addEventListener("change", () => $("follow").checked && refresh());
  $("filter-seat").addEventListener("change", renderTimeline);
  $("filter-pass").addEventListener("change", renderTimeline);
  $("route-pass").addEventListener("change", renderTransfers);
  $("print").addEventListener("click", () => window.print());
  $("zoom-in").addEventListener("click", () => zoom(1.25));
  $("zoom-out").addEventListener("click", () => zoom(0.8));
  $("zoom-fit").addEventListener("click", () => zoom("fit"));
  $("verify").addEventListener("click", async () => {
    try {
      const result = await api.get("/verify");
      const out = $("verify-result");
      const findings = result.findings ?? [];
      out.className = findings.length ? "bad" : "ok";
      out.textContent = findings.length
        ? `${findings.length} finding(s): ${findings.map((f) => `${f.kind} at ${f.seq}: ${f.message}`).join("; ")}`
        : "Hash chain intact: every row, the head and the anchors check.";
    } catch (error) {
      fail(error);
    }
  });
  $("download-record").addEventListener("click", async () => {
    try {
      const text = await api.get("/record", "text");
      const link = $("record-link");
      link.href = URL.createObjectURL(new Blob([text], { type: "application/jsonl" }));
      link.download = `game-${gameId}.jsonl`;
      link.click();
      say("The signed record is downloaded: anyone can check it with 'charleston-fsm record verify FILE'.");
    } catch (error) {
      fail(error);
    }
  });
  $("ruling-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("ruling-text").value.trim();
    if (!text) return say("Write the ruling first: it is recorded with its text.", "error");
    const command = { type: "record_ruling", kind: $("ruling-kind").value, text };
    if ($("ruling-seat").value) command.seat = $("ruling-seat").value;
    const who = command.seat ? ` about ${seatName(command.seat)}` : "";
    if (!(await confirmAct(`Record this ${command.kind}${who} in the game's record? It cannot be removed.`, "Record it"))) return;
    if (await direct(command, `${title(command.kind)} recorded${who}.`)) $("ruling-text").value = "";
  });
  $("pause").addEventListener("click", async () => {
    if (!(await confirmAct("Pause the clock? No deadline runs until you resume it; the pause is recorded.", "Pause the clock"))) return;
    await direct({ type: "pause_clock" }, "The clock is paused.");
  });
  $("resume").addEventListener("click", async () => {
    await direct({ type: "resume_clock" }, "The clock is running again; every deadline moved by the pause.");
  });
  $("close-ding-dong").addEventListener("click", async () => {
    if (!(await confirmAct("Close the Ding Dong window? No Ding Dong can be requested after it.", "Close it"))) return;
    await direct({ type: "close_ding_dong" }, "Ding Dong window closed.");
  });
  $("judge-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const verdict = document.querySelector('input[name="verdict"]:checked')?.value;
    const text = $("judge-text").value.trim();
    if (!verdict || !text) return say("Choose valid or invalid and say why: the verdict is recorded with it.", "error");
    const d = state.view?.game?.declaration;
    const effect = verdict === "valid"
      ? "the game ends with this hand"
      : d?.kind === "heavenly" ? "the Charleston is played from the First Right" : "the Charleston stays complete";
    if (!(await confirmAct(`Judge the ${d?.kind ?? ""} hand ${verdict}? ${effect[0].toUpperCase()}${effect.slice(1)}; a verdict is final.`, `Judge it ${verdict}`))) return;
    await direct({ type: "judge_declaration", verdict, text }, `The hand is judged ${verdict}: ${effect}.`);
  });
}

async function start() {
  if (!api.token) {
    broken("This page needs the director's link, the one that ends in #token=…. Ask whoever created the game (or the round) for it.");
    return;
  }
  try {
    const me = await api.get();
    if (me.role !== "director") {
      broken(`This is ${title(me.role)}'s link, not the director's: it opens ${title(me.role)}'s table.`, {
        href: `/table/${encodeURIComponent(gameId)}#token=${encodeURIComponent(api.token)}`, // the same secret
        text: `Open ${title(me.role)}'s table instead`,
      });
      return;
    }
    state.view = me.view;
    const rules = await fetch(`/v1/rulesets/${encodeURIComponent(me.view.game.ruleset)}`);
    if (rules.ok) state.ruleset = await rules.json();
  } catch (error) {
    if (unreachable(error)) fail(error);
    else broken(plainError(error));
    return;
  }
  wire();
  wireRoundTools({ api, direct, say, fail, seatName, refresh });
  nameSeats();
  await refresh();
  const live = showLive($("live"));
  api.follow((message) => message.event !== "subscribed" && refreshSoon(), (status, error) => {
    live(status, error);
    if (status === "live") {
      answered();
      refreshSoon(); // what happened while the stream was away
    } else if (status === "reconnecting" && !state.down) {
      fail(new TypeError("no answer")); // the stream lost the server: say so until it is back
    }
  });
  setInterval(() => state.view && $("follow").checked && renderSeats(state.view), 1000);
  setInterval(() => state.view && renderRoundTools(state.view), 5000); // calls' waiting time
}

start();
