// A seat's page: its rack, its step and its buttons, all read from the seat's view
// (GET /v1/games/{id}); commands go to POST …/commands; the stream says when to read again.

import { Api, ApiError, gameIdFromPath, refusalText, showLive, tokenFor } from "./api.js";
import { SEATS, faceName, tileElement, title } from "./tiles.js";

const gameId = gameIdFromPath();
const api = new Api(gameId, tokenFor(gameId));
const $ = (id) => document.getElementById(id);

const ui = {
  view: null,
  raw: null,
  jokerRule: null,
  lifted: new Set(), // tile ids lifted above the rack
  blind: 0, // how many arriving tiles to forward unseen
  gifts: new Map(), // Ding Dong: tile id -> receiver
  selectionKey: "",
  busy: false,
  dragging: false, // a tile is being dragged: redraw after the drop
  pressed: false, // a pointer is down on a tile: a redraw now would drop the grip before the drag starts
  renderLater: false,
};

// -- the rack's order: the player's own, kept for the tab ----------------------------------
const orderKey = () => `charleston-order:${gameId}:${ui.view?.seat}`;
const savedOrder = () => JSON.parse(sessionStorage.getItem(orderKey()) || "[]");
const saveOrder = (ids) => sessionStorage.setItem(orderKey(), JSON.stringify(ids));

function rackInOrder(rack) {
  const byId = new Map(rack.map((t) => [t.id, t]));
  const order = savedOrder().filter((id) => byId.has(id));
  for (const t of rack) if (!order.includes(t.id)) order.push(t.id);
  saveOrder(order);
  return order.map((id) => byId.get(id));
}

function moveInOrder(id, toIndex) {
  const order = savedOrder().filter((x) => x !== id);
  order.splice(Math.max(0, Math.min(toIndex, order.length)), 0, id);
  saveOrder(order);
}

// -- reading and sending -------------------------------------------------------------------
function say(text, kind = "info") {
  const el = $("message");
  el.textContent = text;
  el.dataset.kind = kind;
}

// Answers may arrive out of order (a read started before a command can end after it):
// each read or command takes a ticket, and a view older than the one shown is dropped.
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
    showIfNewest(ticket, answer.view);
  } catch (error) {
    say(error instanceof ApiError ? refusalText(error) : `Cannot read the table: ${error}`, "error");
  }
}

let refreshTimer = null;
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 60);
}

async function send(command, done = "") {
  if (ui.busy) return;
  ui.busy = true;
  render();
  const ticket = ++issued;
  try {
    const answer = await api.command(command);
    say(done);
    showIfNewest(ticket, answer.view);
  } catch (error) {
    say(error instanceof ApiError ? refusalText(error) : `Not sent: ${error}`, "error");
  } finally {
    ui.busy = false;
    render();
  }
}

function show(view) {
  if (!ui.view && view.game.ruleset) loadRuleset(view.game.ruleset);
  const moment = (v) => v && `${v.game.state.join()}|${v.game.passes_resolved}`;
  if (ui.view && moment(ui.view) !== moment(view)) {
    ui.blind = 0; // a new step
    if ($("message").dataset.kind === "info") say("");
  }
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
  ui.raw = view; // the service's view; ui.view is what the page shows
  ui.view = withPlacements(view);
  render();
}

async function loadRuleset(name) {
  const response = await fetch(`/v1/rulesets/${encodeURIComponent(name)}`);
  if (response.ok) ui.jokerRule = (await response.json()).joker_rule;
}

// -- drawing -------------------------------------------------------------------------------
function render() {
  const v = ui.view;
  if (!v) return;
  if (ui.dragging || ui.pressed) {
    // redrawing would pull the pressed or dragged tile from under the pointer: after the drop
    ui.renderLater = true;
    return;
  }
  const g = v.game;
  $("who").textContent = `You are ${title(v.seat)}`;
  $("where").textContent = `${g.ruleset} · ${g.state_labels.join(" · ") || g.state.join(" · ")}`;
  renderOthers(v);
  renderPhase(v);
  renderReceived(v);
  renderRack(v);
  renderActions(v);
  renderClock();
}

// -- the seat's own deadline (games with a clock): a countdown, redrawn twice a second ------
function renderClock() {
  const el = $("countdown");
  const c = ui.raw?.clock;
  el.hidden = !c?.due_at;
  if (el.hidden) return;
  const due = Date.parse(c.due_at.replace(/(\.\d{3})\d*Z$/, "$1Z"));
  const left = Math.max(0, Math.ceil((due - Date.now()) / 1000));
  if (c.paused) el.textContent = "The director paused the clock.";
  else if (c.flagged) el.textContent = "Your time ran out: you are flagged late.";
  else el.textContent = `Time left: ${left} s`;
}
setInterval(renderClock, 500);

function renderOthers(v) {
  const g = v.game;
  const list = $("others");
  list.replaceChildren();
  for (const seat of SEATS) {
    if (seat === v.seat) continue;
    const li = document.createElement("li");
    li.dataset.seat = seat;
    const parts = [`${title(seat)}: ${g.hand_sizes[seat]} tiles`];
    for (const step of g.steps) {
      if (!step.participants.includes(seat)) continue;
      parts.push(step.confirmed.includes(seat) ? `${title(seat)} is ready` : "choosing");
    }
    const vote = g.votes?.[seat];
    if (vote) parts.push(`voted ${vote === "stop" ? "to stop" : "to continue"}`);
    const offer = v.courtesy?.offers?.[seat];
    if (offer !== undefined) parts.push(`offers ${offer}`);
    li.textContent = parts.join(" · ");
    list.append(li);
  }
}

function renderPhase(v) {
  const g = v.game;
  const lines = [];
  if (g.votes && Object.keys(g.votes).length) {
    const stop = Object.entries(g.votes).filter(([, c]) => c === "stop").map(([s]) => title(s));
    if (stop.length) lines.push(`Stop the Charleston: ${stop.join(", ")}`);
  }
  if (v.courtesy?.agreed !== null && v.courtesy?.agreed !== undefined) {
    lines.push(`Courtesy agreed: ${v.courtesy.agreed} tile(s)`);
  }
  if (g.declaration) lines.push(`${title(g.declaration.seat)} declared ${g.declaration.kind} Mah Jongg (${g.declaration.verdict})`);
  const dd = g.ding_dong;
  if (dd) {
    lines.push(`Ding Dong: ${dd.requested} of ${dd.max} requested${dd.ready ? ` · ${title(dd.ready)} is Ready` : ""}${dd.closed ? " · closed" : ""}`);
  }
  $("phase").textContent = lines.join(" · ");
  const ended = $("ended");
  ended.hidden = !g.finished;
  ended.textContent = g.finished ? `The Charleston is over${g.ended_reason ? `: ${g.ended_reason}` : ""}.` : "";
}

function renderReceived(v) {
  $("received-zone").hidden = v.received.length === 0;
  const box = $("received");
  box.replaceChildren();
  for (const tile of v.received) {
    const el = tileElement(tile);
    el.classList.add("floating");
    el.draggable = true;
    el.addEventListener("dragstart", (e) => startDrag(e, `received:${tile.id}`));
    el.addEventListener("dragend", endDrag);
    el.addEventListener("click", () => say(`${faceName(tile.face)}: drag it into your rack, or Place all.`));
    box.append(el);
  }
  $("place-all").disabled = ui.busy || !v.allowed_commands.includes("place_tiles");
}

function renderRack(v) {
  const rack = $("rack");
  const locked = new Set((v.selection?.tiles ?? []).map((t) => t.id));
  const focused = document.activeElement?.closest?.("#rack .tile")?.dataset.id;
  rack.replaceChildren();
  for (const tile of rackInOrder(v.rack)) {
    const el = tileElement(tile);
    const up = ui.lifted.has(tile.id);
    el.classList.toggle("lifted", up);
    el.setAttribute("aria-pressed", String(up));
    if (locked.has(tile.id) && up) {
      el.classList.add("locked");
      el.setAttribute("aria-label", `${faceName(tile.face)}, locked`);
    }
    el.draggable = true;
    el.addEventListener("click", () => toggle(tile));
    el.addEventListener("keydown", (e) => rackKey(e, tile));
    el.addEventListener("dragstart", (e) => startDrag(e, `rack:${tile.id}`));
    el.addEventListener("dragend", endDrag);
    el.addEventListener("dragover", (e) => e.preventDefault());
    el.addEventListener("drop", (e) => dropOn(e, tile.id));
    rack.append(el);
  }
  if (focused) rack.querySelector(`[data-id="${focused}"]`)?.focus();
}

function rackKey(e, tile) {
  if (!e.shiftKey || (e.key !== "ArrowLeft" && e.key !== "ArrowRight")) return;
  e.preventDefault();
  const order = savedOrder();
  moveInOrder(tile.id, order.indexOf(tile.id) + (e.key === "ArrowLeft" ? -1 : 1));
  render();
}

function startDrag(e, what) {
  e.dataTransfer.setData("text/plain", what);
  ui.dragging = true;
}

function endDrag() {
  ui.dragging = false;
  ui.pressed = false;
  flushRender();
}

/** The pointer went up without a drag (a click): draw what arrived meanwhile. */
function releasePress() {
  if (!ui.pressed || ui.dragging) return;
  ui.pressed = false;
  flushRender();
}

function flushRender() {
  if (ui.renderLater) {
    ui.renderLater = false;
    render();
  }
}

function dropOn(e, targetId) {
  e.preventDefault();
  ui.dragging = false;
  ui.pressed = false;
  const [from, raw] = (e.dataTransfer.getData("text/plain") || "").split(":");
  const id = Number(raw);
  if (!from || id === targetId) return;
  const order = savedOrder().filter((x) => x !== id);
  const box = e.currentTarget.getBoundingClientRect();
  const after = e.clientX > box.left + box.width / 2;
  order.splice(order.indexOf(targetId) + (after ? 1 : 0), 0, id);
  saveOrder(order);
  if (from === "received") placeOne(id);
  else render();
}

function dropAtEnd(e) {
  if (e.target !== e.currentTarget) return;
  e.preventDefault();
  ui.dragging = false;
  ui.pressed = false;
  const [from, raw] = (e.dataTransfer.getData("text/plain") || "").split(":");
  const id = Number(raw);
  if (!from) return;
  moveInOrder(id, Infinity);
  if (from === "received") placeOne(id);
  else render();
}

// Received tiles are placed one by one on the page (each where it was dropped); the
// service places them together (place_tiles) once the last one is in the rack.
const placedHere = new Set();

/** The view as shown: tiles placed on the page sit in the rack, the rest keep floating. */
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

function placeOne(id) {
  placedHere.add(id);
  ui.view = withPlacements(ui.raw);
  render();
  if (ui.view.received.length === 0) send({ type: "place_tiles" }, "Tiles placed.");
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

// -- the buttons ---------------------------------------------------------------------------
function button(label, onClick, { disabled = false, cls = "" } = {}) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.disabled = disabled || ui.busy;
  if (cls) b.className = cls;
  b.addEventListener("click", onClick);
  return b;
}

function passCount() {
  return ui.lifted.size + ui.blind;
}

function passValid(v) {
  const step = v.step;
  if (!step || v.must_place_first) return false;
  const passable = new Set(step.passable);
  for (const id of ui.lifted) if (!passable.has(id)) return false;
  const n = passCount();
  if (step.count !== null) return n === step.count;
  const [lo, hi] = step.count_range ?? [0, 3];
  return n >= lo && n <= hi;
}

function renderActions(v) {
  const box = $("actions");
  box.replaceChildren();
  const can = new Set(v.allowed_commands);
  const step = v.step;
  const row = (...children) => {
    const div = document.createElement("div");
    div.className = "row";
    div.append(...children);
    box.append(div);
    return div;
  };
  const text = (t, cls = "muted") => {
    const p = document.createElement("span");
    p.className = cls;
    p.textContent = t;
    return p;
  };

  if (step && step.direction) {
    const n = step.count ?? passCount();
    const tiles = [ui.lifted.size, ui.blind];
    const need = step.count !== null ? `${step.count}` : `${step.count_range[0]}-${step.count_range[1]}`;
    row(text(`${step.label}: give ${need} to ${title(step.to)}; ${tiles[0]} lifted${ui.blind ? `, ${ui.blind} unseen` : ""}.`));
    if (v.must_place_first) row(text("Place the received tiles in your rack before the next pass.", "warn"));
    if (step.blind_allowed && step.blind_max > 0) {
      const minus = button("−", () => { ui.blind = Math.max(0, ui.blind - 1); render(); }, { disabled: ui.blind === 0 });
      const plus = button("+", () => { ui.blind = Math.min(step.blind_max, ui.blind + 1); render(); }, { disabled: ui.blind >= step.blind_max });
      minus.setAttribute("aria-label", "One fewer unseen");
      plus.setAttribute("aria-label", "One more unseen");
      const count = text(`Forward unseen (blind): ${ui.blind}`, "");
      count.id = "blind-count";
      row(count, minus, plus);
    }
    const body = { tiles: [...ui.lifted], blind: ui.blind };
    const label = `Pass ${n} ${title(step.direction)}`;
    if (!step.confirmed) {
      row(button(label, () => send({ type: "confirm_pass", ...body }, "Confirmed; waiting for the others."), {
        disabled: !can.has("confirm_pass") || !passValid(v),
        cls: "primary pass",
      }));
    } else {
      row(
        text("Locked in: change or withdraw until the pass resolves.", "locked-note"),
        button(`Change (${n})`, () => send({ type: "change_pass", ...body }, "Changed."), {
          disabled: !can.has("change_pass") || !passValid(v) || sameAsSelection(v),
        }),
        button("Withdraw", () => send({ type: "withdraw_pass" }, "Withdrawn."), { disabled: !can.has("withdraw_pass") }),
      );
    }
  }

  if (can.has("give_ding_dong") || (step && !step.direction)) renderDingDong(v, row, text, can);

  const atVote = v.game.state.some((s) => s.includes("DECIDE"));
  if (can.has("vote") && v.game.steps.length > 0) {
    row(
      text("Late objection: you may still stop the Charleston until this pass resolves."),
      button("Stop the Charleston (late objection)", () => send({ type: "vote", choice: "stop" }), { cls: "danger" }),
    );
  } else if (can.has("vote") || atVote) {
    const mine = v.game.votes?.[v.seat];
    row(
      text(mine ? `You voted ${mine === "stop" ? "to stop" : "to continue"}.` : "Go on to the Second Charleston?"),
      button("Continue", () => send({ type: "vote", choice: "continue" }), { disabled: !can.has("vote") }),
      button("Stop the Charleston", () => send({ type: "vote", choice: "stop" }), { disabled: !can.has("vote"), cls: "danger" }),
    );
  }
  if (can.has("offer_courtesy")) {
    const other = v.courtesy.pair.find((s) => s !== v.seat);
    row(text(`Courtesy pass with ${title(other)}: offer`), ...[0, 1, 2, 3].map((n) =>
      button(`Offer ${n}`, () => send({ type: "offer_courtesy", count: n }, `Offered ${n}.`))));
  }
  if (can.has("declare_mah_jongg")) {
    const kind = v.game.passes_resolved === 0 ? "Heavenly" : "Earthly";
    row(button(`Declare Mah Jongg (${kind} hand)`, () => send({ type: "declare_mah_jongg" }, "Declared.")));
  }
  if (can.has("request_ding_dong")) row(button("Request a Ding Dong", () => send({ type: "request_ding_dong" })));
  if (can.has("declare_ready")) row(button("Declare Ready", () => send({ type: "declare_ready" })));
  if (can.has("challenge_dead_hand")) {
    const pick = document.createElement("select");
    pick.setAttribute("aria-label", "Whose hand");
    for (const s of SEATS) if (s !== v.seat) pick.append(new Option(title(s), s));
    row(pick, button("Challenge a dead hand", () => send({ type: "challenge_dead_hand", target: pick.value })));
  }
  if (!box.children.length && !v.game.finished) row(text("Waiting for the others…"));
}

function sameAsSelection(v) {
  const sel = v.selection;
  if (!sel) return false;
  const ids = sel.tiles.map((t) => t.id);
  return sel.blind === ui.blind && ids.length === ui.lifted.size && ids.every((id) => ui.lifted.has(id));
}

function renderDingDong(v, row, text, can) {
  const others = SEATS.filter((s) => s !== v.seat);
  const lifted = [...ui.lifted];
  for (const id of lifted) {
    if (!ui.gifts.has(id)) {
      const used = new Set(ui.gifts.values());
      ui.gifts.set(id, others.find((s) => !used.has(s)) ?? others[0]);
    }
  }
  row(text(`Ding Dong: one tile to each player (${lifted.length} of 3 lifted).`));
  const byId = new Map(v.rack.map((t) => [t.id, t]));
  for (const id of lifted) {
    const pick = document.createElement("select");
    pick.setAttribute("aria-label", `Receiver of ${faceName(byId.get(id)?.face ?? "")}`);
    for (const s of others) pick.append(new Option(title(s), s, false, ui.gifts.get(id) === s));
    pick.addEventListener("change", () => { ui.gifts.set(id, pick.value); render(); });
    row(text(`${faceName(byId.get(id)?.face ?? "")} →`, ""), pick);
  }
  const receivers = lifted.map((id) => ui.gifts.get(id));
  const valid = lifted.length === 3 && new Set(receivers).size === 3;
  row(button("Give Ding Dong", () => send({
    type: "give_ding_dong",
    gifts: lifted.map((id) => ({ tile: id, to: ui.gifts.get(id) })),
  }, "Given."), { disabled: !can.has("give_ding_dong") || !valid, cls: "primary" }));
}

// -- start ---------------------------------------------------------------------------------
$("place-all").addEventListener("click", () => send({ type: "place_tiles" }, "Tiles placed."));
$("rack").addEventListener("dragover", (e) => e.preventDefault());
$("rack").addEventListener("drop", dropAtEnd);
for (const zone of [$("rack"), $("received")]) {
  zone.addEventListener("pointerdown", (e) => { if (e.target.closest(".tile")) ui.pressed = true; });
}
document.addEventListener("pointerup", releasePress);
// a drag cancels the pointer (dragstart follows at once); a touch scroll cancels it for good
document.addEventListener("pointercancel", () => setTimeout(releasePress, 100));
if (!api.token) {
  say("This page needs a seat's link (…#token=…). Ask whoever created the game.", "error");
} else {
  refresh();
  api.follow(
    (message) => {
      if (message.event === "game_quarantined") say(message.data.detail, "error");
      else if (message.event !== "subscribed") refreshSoon();
    },
    showLive($("live")),
  );
}
