// The seat's page state: one object, owned by the table page (table.js), read and changed
// by its parts (the rack, the actions, the felt, the history). Every part draws from this
// state and the view the service sent; none keeps a copy of its own.

import { title } from "./tiles.js";

export const state = {
  gameId: "",
  view: null, // the view as shown (tiles placed on the page sit in the rack)
  raw: null, // the service's view
  clock: null,
  ruleset: null, // GET /v1/rulesets/{name}: title, joker rule, the rules of each state
  lifted: new Set(), // tile ids lifted above the rack
  blind: 0, // how many arriving tiles to forward unseen
  gifts: new Map(), // Ding Dong: tile id -> receiver
  selectionKey: "",
  busy: false,
  dragging: false,
  pressed: false,
  renderLater: false,
  cursor: undefined, // the rack's focusable tile
  cursorAt: 0,
  floatCursor: undefined,
  history: null,
  broken: false, // the link opens no seat: only the sentence and the way out are shown
  handedOver: false, // the director gave the seat a new link while this page was open
};

/** A seat as people call it: its player's name, else its wind ("Ann", "South"). */
export function nameOf(seat) {
  return state.view?.game?.players?.[seat] || title(seat);
}

/** A seat with its wind when it has a name: "Ann (East)", or "East". */
export function fullName(seat) {
  const name = state.view?.game?.players?.[seat];
  return name ? `${name} (${title(seat)})` : title(seat);
}
