// The rack and the tiles floating above it: drawing, the keyboard (one Tab stop each,
// arrows move, Enter/Space lifts or places, Shift+arrows move a tile) and pointer drags
// that work the same with a mouse, a pen or a finger.

import { $ } from "./dom.js";
import { arrivalNote } from "./history.js";
import { state } from "./table_state.js";
import { tileElement } from "./tiles.js";

/** What the page does when a tile is lifted, placed, or the rack must be drawn again
 * (setupRack). */
const hooks = { toggle: () => {}, place: () => {}, render: () => {} };

// -- the rack's order: the player's own, kept for the tab ----------------------------------
const orderKey = () => `charleston-order:${state.gameId}:${state.view?.seat}`;
export const savedOrder = () => JSON.parse(sessionStorage.getItem(orderKey()) || "[]");
export const saveOrder = (ids) => sessionStorage.setItem(orderKey(), JSON.stringify(ids));

function inOrder(tiles) {
  const byId = new Map(tiles.map((t) => [t.id, t]));
  const order = savedOrder().filter((id) => byId.has(id));
  for (const t of tiles) if (!order.includes(t.id)) order.push(t.id);
  saveOrder(order);
  return order.map((id) => byId.get(id));
}

/** Put tile `id` at position `index` of the rack's order (the others keep theirs). */
export function moveTo(id, index) {
  const order = savedOrder().filter((x) => x !== id);
  order.splice(Math.max(0, Math.min(index, order.length)), 0, id);
  saveOrder(order);
}

/** Where a tile placed now goes: just after the rack's focused (cursor) tile. */
export function cursorIndex() {
  const order = savedOrder();
  const at = order.indexOf(state.cursor);
  return at < 0 ? order.length : at + 1;
}

// -- drawing -------------------------------------------------------------------------------
export function renderRack(v) {
  const box = $("rack");
  const hadFocus = box.contains(document.activeElement);
  const locked = new Set((v.selection?.tiles ?? []).map((t) => t.id));
  const tiles = inOrder(v.rack);
  if (!tiles.some((t) => t.id === state.cursor)) state.cursor = tiles[Math.min(state.cursorAt ?? 0, tiles.length - 1)]?.id;
  box.replaceChildren();
  tiles.forEach((tile, i) => {
    const isLocked = locked.has(tile.id) && state.lifted.has(tile.id);
    const el = tileElement(tile, { note: isLocked ? "locked" : "" });
    const up = state.lifted.has(tile.id);
    el.classList.toggle("lifted", up);
    el.classList.toggle("locked", isLocked);
    el.setAttribute("aria-pressed", String(up));
    el.tabIndex = tile.id === state.cursor ? 0 : -1;
    if (tile.id === state.cursor) {
      state.cursorAt = i;
      el.classList.toggle("cursor", v.received.length > 0);
    }
    el.addEventListener("click", () => {
      if (!clickAllowed()) return;
      state.cursor = tile.id;
      hooks.toggle(tile);
    });
    box.append(el);
  });
  if (hadFocus) focusTile("rack", state.cursor);
}

export function renderReceived(v) {
  const box = $("received");
  const hadFocus = box.contains(document.activeElement);
  $("received-zone").hidden = v.received.length === 0;
  if (!v.received.some((t) => t.id === state.floatCursor)) state.floatCursor = v.received[0]?.id;
  box.replaceChildren();
  for (const tile of v.received) {
    const el = tileElement(tile, { note: arrivalNote(state.history, tile.id) });
    el.classList.add("floating");
    el.tabIndex = tile.id === state.floatCursor ? 0 : -1;
    el.addEventListener("click", () => {
      if (clickAllowed()) hooks.place(tile.id, cursorIndex(), { keyboard: true });
    });
    box.append(el);
  }
  if (hadFocus && v.received.length) focusTile("received", state.floatCursor);
}

export function focusTile(zone, id) {
  $(zone).querySelector(`.tile[data-id="${id}"]`)?.focus();
}

// -- keys: one Tab stop per row of tiles -----------------------------------------------------
const BACK = new Set(["ArrowLeft", "ArrowUp"]);
const FORWARD = new Set(["ArrowRight", "ArrowDown"]);

function onKey(e) {
  const el = e.target.closest?.(".tile");
  if (!el) return;
  const zone = e.currentTarget.id;
  const tiles = [...e.currentTarget.querySelectorAll(".tile")];
  const at = tiles.indexOf(el);
  let to = null;
  if (BACK.has(e.key)) to = at - 1;
  else if (FORWARD.has(e.key)) to = at + 1;
  else if (e.key === "Home") to = 0;
  else if (e.key === "End") to = tiles.length - 1;
  else return;
  e.preventDefault();
  to = Math.max(0, Math.min(tiles.length - 1, to));
  const id = Number(el.dataset.id);
  if (e.shiftKey && zone === "rack" && to !== at) {
    moveTo(id, to);
    state.cursor = id;
    hooks.render();
    focusTile("rack", id);
    return;
  }
  const next = Number(tiles[to].dataset.id);
  if (zone === "rack") state.cursor = next;
  else state.floatCursor = next;
  for (const t of tiles) t.tabIndex = t === tiles[to] ? 0 : -1;
  tiles[to].focus();
}

function onFocus(e) {
  const el = e.target.closest?.(".tile");
  if (!el) return;
  if (e.currentTarget.id === "rack") state.cursor = Number(el.dataset.id);
  else state.floatCursor = Number(el.dataset.id);
}

// -- pointer drags (mouse, pen and touch alike) ---------------------------------------------
let grip = null;
let ghost = null;
let quietUntil = 0;

const clickAllowed = () => performance.now() > quietUntil;

function onPointerDown(e) {
  const el = e.target.closest?.(".tile");
  if (!el || e.button > 0 || !el.closest("#rack, #received")) return;
  grip = {
    id: Number(el.dataset.id),
    from: el.closest("#rack") ? "rack" : "received",
    x0: e.clientX,
    y0: e.clientY,
    pointerId: e.pointerId,
    el,
    moved: false,
  };
  state.pressed = true;
}

function onPointerMove(e) {
  if (!grip || e.pointerId !== grip.pointerId) return;
  if (!grip.moved) {
    if (Math.hypot(e.clientX - grip.x0, e.clientY - grip.y0) < 8) return;
    grip.moved = true;
    state.dragging = true;
    ghost = grip.el.cloneNode(true);
    ghost.removeAttribute("data-id");
    ghost.setAttribute("aria-hidden", "true");
    ghost.tabIndex = -1;
    ghost.classList.add("ghost");
    document.body.append(ghost);
    grip.el.classList.add("dragging");
  }
  e.preventDefault();
  ghost.style.left = `${e.clientX - ghost.offsetWidth / 2}px`;
  ghost.style.top = `${e.clientY - ghost.offsetHeight / 2}px`;
  markDrop(dropTarget(e.clientX, e.clientY, grip.id));
}

function onPointerUp(e) {
  if (!grip || e.pointerId !== grip.pointerId) return;
  const g = grip;
  grip = null;
  state.pressed = false;
  state.dragging = false;
  if (!g.moved) {
    // draw whatever arrived while the tile was held, after the click this release makes
    if (state.renderLater) setTimeout(hooks.render, 0);
    return;
  }
  quietUntil = performance.now() + 400; // the click that may follow a drop is not a lift
  ghost?.remove();
  ghost = null;
  markDrop(null);
  g.el.classList.remove("dragging");
  const target = e.type === "pointerup" ? dropTarget(e.clientX, e.clientY, g.id) : null;
  if (!target) {
    hooks.render();
    return;
  }
  if (g.from === "received") hooks.place(g.id, target.index);
  else {
    moveTo(g.id, target.index);
    state.cursor = g.id;
    hooks.render();
  }
}

/** The rack position under a point: before or after the tile there, or the rack's end. */
function dropTarget(x, y, dragged) {
  const under = document.elementFromPoint(x, y);
  if (!under?.closest("#rack")) return null;
  const tile = under.closest("#rack .tile");
  const order = savedOrder().filter((id) => id !== dragged);
  if (!tile) return { index: order.length, el: null };
  const box = tile.getBoundingClientRect();
  const after = x > box.left + box.width / 2;
  const at = order.indexOf(Number(tile.dataset.id));
  if (at < 0) return null; // onto itself
  return { index: at + (after ? 1 : 0), el: tile, after };
}

function markDrop(target) {
  for (const t of document.querySelectorAll(".drop-before, .drop-after")) t.classList.remove("drop-before", "drop-after");
  target?.el?.classList.add(target.after ? "drop-after" : "drop-before");
}

/** Wire the rack's keys and pointers; `toggle(tile)`, `place(id, index, how)` and
 * `render()` are the page's. */
export function setupRack({ toggle, place, render }) {
  Object.assign(hooks, { toggle, place, render });
  for (const zone of [$("rack"), $("received")]) {
    zone.addEventListener("keydown", onKey);
    zone.addEventListener("focusin", onFocus);
    zone.addEventListener("pointerdown", onPointerDown);
  }
  document.addEventListener("pointermove", onPointerMove, { passive: false });
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);
}
