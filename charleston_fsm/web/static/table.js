// A seat's page: the table around its rack, read from the seat's own view (GET
// /v1/games/{id}) and its own redacted events (GET …/events, then the stream); commands go
// to POST …/commands. Nothing here knows another seat's concealed tiles.
//
// This module owns the page: its state (table_state.js), reading and sending, and the
// drawing of each part in turn (the felt, the rack, the actions, help, the history, the
// clock, motion). The parts import the state, never this module.

import { renderActions, setupActions } from "./actions.js";
import { Api, ApiError, gameIdFromPath, plainError, tokenFor } from "./api.js";
import { renderClock, startClock } from "./clock.js";
import { $, element } from "./dom.js";
import { renderCentre, renderPhase, renderSeats } from "./felt.js";
import { renderHelp } from "./help.js";
import { History } from "./history.js";
import { leaving, play } from "./motion.js";
import { focusTile, renderRack, renderReceived, saveOrder, savedOrder, setupRack } from "./rack.js";
import { fullName, nameOf, state } from "./table_state.js";
import { title } from "./tiles.js";

state.gameId = gameIdFromPath();
const token = tokenFor(state.gameId);
const api = new Api(state.gameId, token);

// -- words for people: the message line, the problem banner, the live region --------------
function say(text, kind = "info") {
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
    el.append(element("span", p.text));
    if (p.link) {
      const a = element("a", p.link.text);
      a.href = p.link.href;
      el.append(" ", a);
    }
  }
  el.hidden = problems.size === 0;
}

/** The link opens no seat: only the sentence and the way out stay on the page. */
function broken(kind, text, link = null) {
  state.broken = true;
  document.body.classList.add("broken");
  problem(kind, text, link);
}

/** The seat was handed over (its token replaced) while this page was open: the page
 * becomes one sentence, with no control and no countdown left; nothing is sent from it. */
function handedOver() {
  if (state.handedOver) return;
  state.handedOver = true;
  stopFollowing?.();
  state.clock = null;
  problems.clear();
  if ($("ask").open) $("ask").close();
  $("who").textContent = "This seat is no longer yours";
  $("where").textContent = "";
  document.title = "Charleston · seat handed over";
  say("");
  broken("handover", "The director handed this seat to someone else, so this link no longer opens it: ask the director if you think you should still be playing.");
  $("problem").focus();
}

/** Whether a refusal says this page's link stopped opening the seat it showed. */
const lostSeat = (error) => state.view && error instanceof ApiError && error.status === 401;

let spoken = [];
let speakTimer = null;
function announce(text) {
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
    if (answer.role === "director") return directorsLink();
    problem("read", null);
    showIfNewest(ticket, answer.view);
  } catch (error) {
    if (lostSeat(error)) return handedOver();
    problem("read", `Cannot read the table. ${plainError(error)}`);
    return error;
  }
  return null;
}

let refreshTimer = null;
let stopFollowing = null;
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 60);
}

/** Send a command; `then(view)` runs once it is accepted. */
async function send(command, done = "", then = null) {
  if (state.busy || state.broken) return false;
  state.busy = true;
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
    if (lostSeat(error)) {
      handedOver();
      return false;
    }
    if (error instanceof ApiError && error.status < 500 && ![401, 403, 404].includes(error.status)) {
      say(`Not done: ${error.message}`, "error");
    } else {
      problem("send", `Not sent. ${plainError(error)}`);
    }
    refreshSoon();
    return false;
  } finally {
    state.busy = false;
    render();
  }
}

function show(view) {
  if (!state.view && view.game.ruleset) loadRuleset(view.game.ruleset);
  if (!state.history) state.history = new History(view.seat, nameOf);
  const before = state.view;
  const moment = (v) => v && `${v.game.state.join()}|${v.game.passes_resolved}`;
  // this seat's own step: another pair's courtesy pass resolving is not a new step here
  const ownStep = (v) => v && (v.step ? `${v.step.label}` : `-${v.game.finished}`);
  if (before && ownStep(before) !== ownStep(view)) {
    // a new step: nothing stays lifted from the last one
    state.lifted.clear();
    state.blind = 0;
    state.gifts.clear();
    const step = view.step;
    if (step) announce(`Now: ${step.label}.`);
    else if (view.game.finished) announce(`The Charleston is over. ${view.game.ending?.text ?? ""}`);
  }
  if (before && moment(before) !== moment(view) && $("message").dataset.kind === "info") say("");
  const key = JSON.stringify(view.selection);
  if (key !== state.selectionKey) {
    // a confirmed choice is what is lifted; once withdrawn, its tiles stay lifted, unlocked
    state.selectionKey = key;
    if (view.selection) {
      state.lifted = new Set(view.selection.tiles.map((t) => t.id));
      state.blind = view.selection.blind;
    }
  }
  const inHand = new Set(view.rack.map((t) => t.id));
  for (const id of state.lifted) if (!inHand.has(id)) state.lifted.delete(id);
  if (!view.step?.blind_allowed) state.blind = 0;
  if (view.game.finished) state.lifted.clear(); // nothing is passed after the end
  const next = withPlacements(view);
  const gone = leaving(before, next);
  state.raw = view;
  if (view.clock) state.clock = view.clock;
  state.view = next;
  render();
  if (!state.dragging && !state.pressed) play(gone, before, next, (id) => state.history?.from.get(id));
}

async function loadRuleset(name) {
  const response = await fetch(`/v1/rulesets/${encodeURIComponent(name)}`);
  if (!response.ok) return;
  state.ruleset = await response.json();
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
  state.cursor = id;
  state.view = withPlacements(state.raw);
  render();
  if (state.view.received.length) {
    if (keyboard) focusTile("received", state.view.received[0].id);
    return;
  }
  focusTile("rack", id);
  send({ type: "place_tiles" }, "Tiles placed.", () => focusTile("rack", id));
}

function placeAll() {
  const first = state.view.received[0]?.id;
  send({ type: "place_tiles" }, "Tiles placed.", () => {
    if (first !== undefined) {
      state.cursor = first;
      render();
      focusTile("rack", first);
    }
  });
}

function toggle(tile) {
  const v = state.view;
  if (v?.game.finished) {
    say("The Charleston is over: no tile is passed now.", "rule");
    return;
  }
  if (tile.face === "J") {
    const rule = state.ruleset?.joker_rule;
    say(rule ? `${rule.message} (${rule.rule})` : "Jokers cannot be passed.", "rule");
    return;
  }
  if (state.lifted.has(tile.id)) state.lifted.delete(tile.id);
  else state.lifted.add(tile.id);
  if (state.gifts.size) for (const id of state.gifts.keys()) if (!state.lifted.has(id)) state.gifts.delete(id);
  say("");
  render();
}

// -- drawing -------------------------------------------------------------------------------
function render() {
  const v = state.view;
  if (!v || state.broken) return;
  if (state.dragging || state.pressed) {
    state.renderLater = true; // the pointer's release draws what arrived meanwhile
    return;
  }
  state.renderLater = false;
  const g = v.game;
  $("who").textContent = g.players?.[v.seat] ? `You are ${g.players[v.seat]}, ${title(v.seat)}` : `You are ${title(v.seat)}`;
  $("where").textContent = `${state.ruleset?.title ?? g.ruleset} · ${g.state_labels.join(" · ") || g.state.join(" · ")}`;
  document.title = `Charleston · ${fullName(v.seat)}`;
  renderSeats(v);
  renderCentre(v);
  renderPhase(v);
  renderReceived(v);
  renderRack(v);
  renderActions(v);
  renderHelp(v);
  renderHistory();
  renderClock(state.clock);
  renderCall();
  const floating = v.received.length > 0;
  $("received-hint").textContent = floating
    ? "These tiles float above your rack. Tap one, or press Enter on it, to put it after the marked rack tile; or drag it into place."
    : "";
  $("rack-hint").textContent = g.finished
    ? "The Charleston is over: your tiles stay as they are. Drag a tile or use Shift with an arrow to reorder."
    : "Tap a tile, or press Enter or Space on it, to lift it. Arrow keys move between tiles; Shift with an arrow moves a tile. Drag a tile to reorder.";
}

/** The call to the director: open (when, waiting for the director) or a form to call. */
function renderCall() {
  const at = state.clock?.called_at;
  $("call-state").textContent = at
    ? `You called the director at ${new Date(at).toLocaleTimeString([], { hour12: false })}: they come to your table.`
    : "A question, a dispute, a tile gone wrong? Call the director to your table.";
  $("call-button").disabled = Boolean(at) || state.busy;
  $("call-reason").disabled = Boolean(at);
}

const CALLED = "The director is called: they see your table flagged, and your reason.";

async function callDirector(event) {
  event.preventDefault();
  const reason = $("call-reason").value.trim();
  try {
    const answer = await api.command(reason ? { reason } : {}, "/call");
    $("call-reason").value = "";
    say(CALLED);
    showIfNewest(++issued, answer.view);
  } catch (error) {
    if (lostSeat(error)) return handedOver();
    say(`Not called: ${plainError(error)}`, "error");
  }
}

/** At a table that starts once all four players are there, say this seat is: the last
 * one's arrival starts it (POST …/present, answered once per seat). */
async function arrive() {
  const c = state.raw?.clock;
  if (!c?.held || !c.awaiting?.includes(state.raw.seat)) return;
  try {
    const answer = await api.command({}, "/present");
    showIfNewest(++issued, answer.view);
  } catch (_) {
    refreshSoon(); // it started meanwhile (409 not_awaited), or the read says what is wrong
  }
}

function renderHistory() {
  const h = state.history;
  if (!h) return;
  const end = h.entries.at(-1);
  const ending = state.view?.game?.ending;
  if (end?.kind === "end" && ending && !end.final) {
    end.text = `The Charleston is over. ${ending.text}`; // the record's reason, in words
    end.final = true;
  }
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
    $("last-pass-lines").replaceChildren(...last.lines.map((t) => element("li", t)));
  }
}

function entryItem(e) {
  const li = element("li");
  li.dataset.kind = e.kind;
  li.append(element(e.lines.length ? "strong" : "span", e.text));
  for (const line of e.lines) li.append(element("span", line, "line"));
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
    state.clock = message.data.clock;
    renderClock(state.clock);
    return;
  }
  const event = message.data;
  const me = state.view?.seat;
  const added = state.history?.add(event, state.raw?.step?.to) ?? [];
  for (const e of added) announce(e.lines.length ? `${e.text} ${e.lines.join(" ")}` : e.text);
  if (event.type === "call_answered" && event.seat === me && $("message").textContent === CALLED) say("");
  if (event.type === "clock_expired" && event.seat === me) {
    state.lifted.clear(); // the clock chose for this seat: what was lifted is no choice now
    state.blind = 0;
    say("Your time ran out and the clock acted for you: see What happened.", "warn");
  }
  if (state.history?.dropped?.seq === event.seq) {
    state.lifted.clear();
    state.blind = 0;
    say(`${nameOf(event.seat)}'s late objection stopped the Charleston: your confirmed pass was dropped and no tile moved.`, "warn");
  }
  refreshSoon();
}

function showLive(status, error) {
  if (status === "closed" && lostSeat(error)) return handedOver();
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

function directorsLink() {
  problem("read", null);
  broken(
    "link",
    "This is the director's link: it opens the director's desk, not a player's seat.",
    { href: `/desk/${encodeURIComponent(state.gameId)}#token=${encodeURIComponent(token)}`, text: "Open the director's desk" },
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
  startClock(() => state.clock, announce);
  setupRack({ toggle, place, render });
  setupActions({ send, say, render, placeAll });
  $("sort").addEventListener("click", () => {
    if (!state.view) return;
    saveOrder(state.view.rack.map((t) => t.id).sort((a, b) => a - b));
    render();
    say("Rack sorted: Bams, Craks, Dots, winds, dragons, flowers, jokers.");
  });
  $("copy-link").addEventListener("click", copyLink);
  $("call-form").addEventListener("submit", callDirector);
  if (!token) {
    broken("link", "This page needs your seat's link (it ends with #token=…). Ask whoever created the game for it.", { href: "/", text: "Go to the front door" });
    return;
  }
  for (;;) {
    const error = await refresh();
    if (state.view || state.broken) break;
    if (error instanceof ApiError && error.status < 500) {
      problem("read", null);
      broken("link", plainError(error), { href: "/", text: "Go to the front door" });
      return; // a wrong link stays wrong
    }
    await new Promise((done) => setTimeout(done, 2000)); // the service may come back
  }
  if (!state.view) return;
  await arrive();
  let after = 0;
  try {
    const listing = await api.get("/events");
    for (const event of listing.events) state.history.add(event);
    after = listing.last_seq;
    render();
  } catch (error) {
    problem("read", `Cannot read what happened so far. ${plainError(error)}`);
  }
  const greeting = state.history?.takeover;
  if (greeting) say(greeting); // a substitute: they take the seat over from here on
  stopFollowing = api.follow(onEvent, showLive, after);
}

start();
