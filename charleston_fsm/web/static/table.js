// A seat's page: the table around its rack, read from the seat's own view (GET
// /v1/games/{id}) and its own redacted events (GET …/events, then the stream); commands go
// to POST …/commands. Nothing here knows another seat's concealed tiles.

import { renderActions, setupActions } from "./actions.js";
import { Api, ApiError, gameIdFromPath, plainError, tokenFor } from "./api.js";
import { renderClock, startClock } from "./clock.js";
import { History } from "./history.js";
import { $, focusTile, rack, renderRack, renderReceived, saveOrder, savedOrder, setupRack } from "./rack.js";
import { SEATS, placeOf, title } from "./tiles.js";

const gameId = gameIdFromPath();
const token = tokenFor(gameId);
const api = new Api(gameId, token);

export const ui = {
  view: null, // the view as shown (tiles placed on the page sit in the rack)
  raw: null, // the service's view
  clock: null,
  jokerRule: null,
  lifted: new Set(), // tile ids lifted above the rack
  blind: 0, // how many arriving tiles to forward unseen
  gifts: new Map(), // Ding Dong: tile id -> receiver
  selectionKey: "",
  busy: false,
  dragging: false,
  pressed: false,
  cursor: undefined, // the rack's focusable tile
  floatCursor: undefined,
  history: null,
};

// -- words for people: the message line, the problem banner, the live region --------------
export function say(text, kind = "info") {
  const el = $("message");
  el.textContent = text;
  el.dataset.kind = kind;
}

const problems = new Map(); // kind -> {text, link}
function problem(kind, text, link = null) {
  if (text) problems.set(kind, { text, link });
  else problems.delete(kind);
  const el = $("problem");
  el.replaceChildren();
  for (const p of problems.values()) {
    const line = document.createElement("span");
    line.textContent = p.text;
    el.append(line);
    if (p.link) {
      const a = document.createElement("a");
      a.href = p.link.href;
      a.textContent = p.link.text;
      el.append(" ", a);
    }
  }
  el.hidden = problems.size === 0;
}

let spoken = [];
let speakTimer = null;
export function announce(text) {
  if (!text) return;
  spoken.push(text);
  clearTimeout(speakTimer);
  speakTimer = setTimeout(() => {
    $("announce").textContent = spoken.join(" ");
    spoken = [];
  }, 150);
}

// -- reading and sending -------------------------------------------------------------------
// Answers may arrive out of order: each read or command takes a ticket, and a view older
// than the one shown is dropped.
let issued = 0;
let shown = 0;
function showIfNewest(ticket, view) {
  if (ticket < shown) return;
  shown = ticket;
  show(view);
}

async function refresh() {
  const ticket = ++issued;
  try {
    const answer = await api.get();
    if (answer.role === "director") return wrongPage();
    problem("read", null);
    showIfNewest(ticket, answer.view);
  } catch (error) {
    problem("read", `Cannot read the table. ${plainError(error)}`);
    return error;
  }
  return null;
}

let refreshTimer = null;
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 60);
}

/** Send a command; `then(view)` runs once it is accepted. */
export async function send(command, done = "", then = null) {
  if (ui.busy) return false;
  ui.busy = true;
  render();
  const ticket = ++issued;
  try {
    const answer = await api.command(command);
    problem("send", null);
    say(done);
    showIfNewest(ticket, answer.view);
    then?.(answer.view);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status < 500 && ![401, 403, 404].includes(error.status)) {
      say(`Not done: ${error.message}`, "error");
    } else {
      problem("send", `Not sent. ${plainError(error)}`);
    }
    refreshSoon();
    return false;
  } finally {
    ui.busy = false;
    render();
  }
}

function show(view) {
  if (!ui.view && view.game.ruleset) loadRuleset(view.game.ruleset);
  if (!ui.history) ui.history = rack.history = new History(view.seat);
  const moment = (v) => v && `${v.game.state.join()}|${v.game.passes_resolved}`;
  // this seat's own step: another pair's courtesy pass resolving is not a new step here
  const ownStep = (v) => v && (v.step ? `${v.step.label}` : `-${v.game.finished}`);
  if (ui.view && ownStep(ui.view) !== ownStep(view)) {
    // a new step: nothing stays lifted from the last one
    ui.lifted.clear();
    ui.blind = 0;
    ui.gifts.clear();
    const step = view.step;
    if (step) announce(`Now: ${step.label}.`);
    else if (view.game.finished) announce("The Charleston is over.");
  }
  if (ui.view && moment(ui.view) !== moment(view) && $("message").dataset.kind === "info") say("");
  const key = JSON.stringify(view.selection);
  if (key !== ui.selectionKey) {
    // a confirmed choice is what is lifted; once withdrawn, its tiles stay lifted, unlocked
    ui.selectionKey = key;
    if (view.selection) {
      ui.lifted = new Set(view.selection.tiles.map((t) => t.id));
      ui.blind = view.selection.blind;
    }
  }
  const inHand = new Set(view.rack.map((t) => t.id));
  for (const id of ui.lifted) if (!inHand.has(id)) ui.lifted.delete(id);
  if (!view.step?.blind_allowed) ui.blind = 0;
  ui.raw = view;
  if (view.clock) ui.clock = view.clock;
  ui.view = withPlacements(view);
  render();
}

async function loadRuleset(name) {
  const response = await fetch(`/v1/rulesets/${encodeURIComponent(name)}`);
  if (!response.ok) return;
  const ruleset = await response.json();
  ui.jokerRule = ruleset.joker_rule;
  ui.rulesetTitle = ruleset.title;
  render();
}

// -- received tiles: placed one by one on the page, sent together (place_tiles) -------------
const placedHere = new Set();

function withPlacements(view) {
  const received = new Set(view.received.map((t) => t.id));
  for (const id of placedHere) if (!received.has(id)) placedHere.delete(id);
  if (!placedHere.size) return view;
  return {
    ...view,
    rack: [...view.rack, ...view.received.filter((t) => placedHere.has(t.id))],
    received: view.received.filter((t) => !placedHere.has(t.id)),
  };
}

/** Put a floating tile into the rack at `index`; the last one sends place_tiles. */
function place(id, index, { keyboard = false } = {}) {
  const order = savedOrder().filter((x) => x !== id);
  order.splice(Math.max(0, Math.min(index, order.length)), 0, id);
  saveOrder(order);
  placedHere.add(id);
  ui.cursor = id;
  ui.view = withPlacements(ui.raw);
  render();
  if (ui.view.received.length) {
    if (keyboard) focusTile("received", ui.view.received[0].id);
    return;
  }
  focusTile("rack", id);
  send({ type: "place_tiles" }, "Tiles placed.", () => focusTile("rack", id));
}

export function placeAll() {
  const first = ui.view.received[0]?.id;
  send({ type: "place_tiles" }, "Tiles placed.", () => {
    if (first !== undefined) {
      ui.cursor = first;
      render();
      focusTile("rack", first);
    }
  });
}

function toggle(tile) {
  if (tile.face === "J") {
    const rule = ui.jokerRule;
    say(rule ? `${rule.message} (${rule.rule})` : "Jokers cannot be passed.", "rule");
    return;
  }
  if (ui.lifted.has(tile.id)) ui.lifted.delete(tile.id);
  else ui.lifted.add(tile.id);
  if (ui.gifts.size) for (const id of ui.gifts.keys()) if (!ui.lifted.has(id)) ui.gifts.delete(id);
  say("");
  render();
}

// -- drawing -------------------------------------------------------------------------------
export function render() {
  const v = ui.view;
  if (!v) return;
  if (ui.dragging || ui.pressed) {
    ui.renderLater = true; // the pointer's release draws what arrived meanwhile
    return;
  }
  ui.renderLater = false;
  const g = v.game;
  $("who").textContent = `You are ${title(v.seat)}`;
  $("where").textContent = `${ui.rulesetTitle ?? g.ruleset} · ${g.state_labels.join(" · ") || g.state.join(" · ")}`;
  renderSeats(v);
  renderCentre(v);
  renderPhase(v);
  renderReceived(v);
  renderRack(v);
  renderActions(v);
  renderHistory();
  renderClock(ui.clock);
  const floating = v.received.length > 0;
  $("received-hint").textContent = floating
    ? "These tiles float above your rack. Tap one, or press Enter on it, to put it after the marked rack tile; or drag it into place."
    : "";
  $("rack-hint").textContent =
    "Tap a tile, or press Enter or Space on it, to lift it. Arrow keys move between tiles; Shift with an arrow moves a tile. Drag a tile to reorder.";
}

function seatStatus(v, seat) {
  const g = v.game;
  const parts = [];
  for (const step of g.steps) {
    if (!step.participants.includes(seat)) continue;
    parts.push(step.confirmed.includes(seat) ? `${title(seat)} is ready` : "choosing…");
  }
  const vote = g.votes?.[seat];
  if (vote) parts.push(vote === "stop" ? "voted to stop" : "voted to continue");
  const offer = v.courtesy?.offers?.[seat];
  if (offer !== undefined) parts.push(`offers ${offer}`);
  return parts;
}

function renderSeats(v) {
  const box = $("others");
  for (const old of box.querySelectorAll(".seat-box")) old.remove();
  const to = v.step?.to;
  const from = v.step?.from;
  for (const seat of SEATS) {
    if (seat === v.seat) continue;
    const where = placeOf(v.seat, seat);
    const el = document.createElement("div");
    el.className = "seat-box";
    el.dataset.seat = seat;
    el.dataset.place = where;
    el.classList.toggle("receiver", seat === to);
    const name = document.createElement("h2");
    name.textContent = `${title(seat)}`;
    const pos = document.createElement("span");
    pos.className = "pos";
    pos.textContent = ` · ${title(where)}`;
    name.append(pos);
    const count = document.createElement("p");
    count.className = "count";
    count.textContent = `${v.game.hand_sizes[seat]} tiles`;
    const status = document.createElement("p");
    status.className = "status";
    const parts = seatStatus(v, seat);
    if (seat === to) parts.push("receives your pass");
    if (seat === from) parts.push("passes to you");
    status.textContent = parts.join(" · ");
    el.append(name, count, status);
    box.append(el);
  }
}

function progressText(v) {
  const g = v.game;
  if (g.finished) return "The Charleston is over";
  const label = v.step?.label ?? g.steps[0]?.label ?? "";
  if (g.state.some((s) => s.includes("COURTESY")) || /Courtesy/.test(label)) return "The courtesy pass";
  if (/^(First|Second) Charleston/.test(label)) return `Pass ${g.passes_resolved + 1} of 7 · ${label}`;
  if (g.state.some((s) => s.includes("DECIDE"))) return "The vote: go on to the Second Charleston?";
  return label || g.state_labels.join(" · ") || "The table";
}

function renderCentre(v) {
  $("progress").textContent = progressText(v);
  const step = v.step;
  const arrow = $("arrow");
  arrow.hidden = !step?.to;
  if (step?.to) arrow.dataset.to = placeOf(v.seat, step.to);
  let turn = "";
  if (step?.to) {
    const n = step.count ?? "0 to 3";
    const where = `${title(step.to)} (${title(placeOf(v.seat, step.to))})`;
    const waiting = v.game.steps.flatMap((s) => s.awaiting).filter((s) => s !== v.seat).map(title);
    turn = step.confirmed
      ? `You passed to ${where}${waiting.length ? `; waiting for ${waiting.join(", ")}` : ""}.`
      : `You pass ${n} to ${where}.`;
  }
  $("turn").textContent = turn;
}

function renderPhase(v) {
  const g = v.game;
  const lines = [];
  const stop = Object.entries(g.votes ?? {}).filter(([, c]) => c === "stop").map(([s]) => (s === v.seat ? "you" : title(s)));
  if (stop.length) lines.push(`Voted to stop the Charleston: ${stop.join(", ")}`);
  if (v.courtesy?.agreed !== null && v.courtesy?.agreed !== undefined) {
    lines.push(`Courtesy agreed: ${v.courtesy.agreed} tile${v.courtesy.agreed === 1 ? "" : "s"}`);
  }
  if (g.declaration) lines.push(`${title(g.declaration.seat)} declared ${g.declaration.kind} Mah Jongg (${g.declaration.verdict})`);
  const dd = g.ding_dong;
  const inDingDong = g.state.some((s) => s.includes("DING"));
  if (dd && (dd.requested > 0 || inDingDong || dd.ready || dd.closed)) {
    lines.push(`Ding Dong: ${dd.requested} of ${dd.max} requested${dd.ready ? ` · ${title(dd.ready)} is Ready` : ""}${dd.closed ? " · closed" : ""}`);
  }
  $("phase").textContent = lines.join(" · ");
  const ended = $("ended");
  ended.hidden = !g.finished;
  ended.textContent = g.finished ? `The Charleston is over${g.ended_reason ? `: ${g.ended_reason}` : ""}.` : "";
}

function renderHistory() {
  const h = ui.history;
  if (!h) return;
  const list = $("history-list");
  if (list.dataset.count !== String(h.entries.length) || list.dataset.text !== h.entries.at(-1)?.text) {
    list.replaceChildren(...[...h.entries].reverse().map(entryItem));
    list.dataset.count = String(h.entries.length);
    list.dataset.text = h.entries.at(-1)?.text ?? "";
  }
  const last = h.lastPass;
  $("last-pass").hidden = !last;
  if (last) {
    $("last-pass-title").textContent = `Last pass: ${last.text}`;
    $("last-pass-lines").replaceChildren(...last.lines.map((t) => Object.assign(document.createElement("li"), { textContent: t })));
  }
}

function entryItem(e) {
  const li = document.createElement("li");
  li.dataset.kind = e.kind;
  const head = document.createElement(e.lines.length ? "strong" : "span");
  head.textContent = e.text;
  li.append(head);
  for (const line of e.lines) li.append(Object.assign(document.createElement("span"), { className: "line", textContent: line }));
  return li;
}

// -- the stream: history, announcements, the clock's acts ----------------------------------
function onEvent(message) {
  if (message.event === "subscribed") return;
  if (message.event === "game_quarantined") {
    problem("stream", "This game is set aside while the director checks its record. Ask the director.");
    return;
  }
  if (message.event === "deadline") {
    ui.clock = message.data.clock;
    renderClock(ui.clock);
    return;
  }
  const event = message.data;
  const me = ui.view?.seat;
  const added = ui.history?.add(event, ui.raw?.step?.to) ?? [];
  for (const e of added) announce(e.lines.length ? `${e.text} ${e.lines.join(" ")}` : e.text);
  if (event.type === "clock_expired" && event.seat === me) {
    ui.lifted.clear(); // the clock chose for this seat: what was lifted is no choice now
    ui.blind = 0;
    say("Your time ran out and the clock acted for you: see What happened.", "warn");
  }
  if (ui.history?.dropped?.seq === event.seq) {
    ui.lifted.clear();
    ui.blind = 0;
    say(`${title(event.seat)}'s late objection stopped the Charleston: your confirmed pass was dropped and no tile moved.`, "warn");
  }
  refreshSoon();
}

function showLive(status) {
  const words = { live: "● live", reconnecting: "○ reconnecting…", closed: "stream closed" };
  $("live").textContent = words[status];
  if (status === "live") {
    problem("stream", null);
    problem("send", null);
    refreshSoon();
  } else if (status === "reconnecting") {
    problem("stream", "Lost the connection to the service. The page is trying again by itself; check your network if this stays.");
  } else {
    problem("stream", "The table stopped updating: the link no longer opens this seat. Ask whoever created the game for your seat's link.");
  }
}

function wrongPage() {
  problem("read", null);
  problem(
    "link",
    "This is the director's link: it opens the director's desk, not a player's seat.",
    { href: `/desk/${encodeURIComponent(gameId)}#token=${encodeURIComponent(token)}`, text: "Open the director's desk" },
  );
  $("who").textContent = "Not a seat";
}

async function copyLink() {
  const link = `${location.origin}${location.pathname}#token=${encodeURIComponent(token)}`;
  try {
    await navigator.clipboard.writeText(link);
    say("Your link is copied. It opens your seat: keep it to yourself.");
  } catch (_) {
    say(`Copy this link; it opens your seat (keep it to yourself): ${link}`);
  }
}

async function start() {
  startClock(() => ui.clock, announce);
  rack.ui = ui;
  rack.gameId = gameId;
  rack.toggle = toggle;
  rack.place = place;
  rack.render = render;
  setupRack();
  setupActions();
  $("sort").addEventListener("click", () => {
    if (!ui.view) return;
    saveOrder(ui.view.rack.map((t) => t.id).sort((a, b) => a - b));
    render();
    say("Rack sorted: Bams, Craks, Dots, winds, dragons, flowers, jokers.");
  });
  $("copy-link").addEventListener("click", copyLink);
  if (!token) {
    problem("link", "This page needs your seat's link (it ends with #token=…). Ask whoever created the game for it.");
    return;
  }
  for (;;) {
    const error = await refresh();
    if (ui.view || problems.has("link")) break;
    if (error instanceof ApiError && error.status < 500) return; // a wrong link stays wrong
    await new Promise((done) => setTimeout(done, 2000)); // the service may come back
  }
  if (!ui.view) return;
  let after = 0;
  try {
    const listing = await api.get("/events");
    for (const event of listing.events) ui.history.add(event);
    after = listing.last_seq;
    render();
  } catch (error) {
    problem("read", `Cannot read what happened so far. ${plainError(error)}`);
  }
  api.follow(onEvent, showLive, after);
}

start();
