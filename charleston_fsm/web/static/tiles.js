// Tile faces as people read them, drawn by the project (inline SVG, nothing fetched).
// Every tile shows its name in words as well as its picture, so colour is never the only
// cue, and its accessible name is its visible text ("5 Bam", "Red Dragon").

const SUITS = { B: ["Bam", "bam"], C: ["Crak", "crak"], D: ["Dot", "dot"] };
const HONOURS = {
  EW: ["East Wind", "E", "wind"],
  SW: ["South Wind", "S", "wind"],
  WW: ["West Wind", "W", "wind"],
  NW: ["North Wind", "N", "wind"],
  RD: ["Red Dragon", "", "dragon red"],
  GD: ["Green Dragon", "", "dragon green"],
  WD: ["White Dragon (Soap)", "", "dragon white"],
  F: ["Flower", "", "flower"],
  J: ["Joker", "J", "joker"],
};

/** The face of a tile id, as the service numbers the set (docs: charleston_fsm/tiles.py):
 * 1-9 of Bams, Craks, Dots four each, the four winds four each, the three dragons four
 * each, eight flowers, eight jokers. */
export function faceOf(id) {
  if (id < 108) return `${Math.floor((id % 36) / 4) + 1}${"BCD"[Math.floor(id / 36)]}`;
  if (id < 124) return ["EW", "SW", "WW", "NW"][Math.floor((id - 108) / 4)];
  if (id < 136) return ["RD", "GD", "WD"][Math.floor((id - 124) / 4)];
  return id < 144 ? "F" : "J";
}

/** The name of a face: "5 Bam", "Red Dragon", "Joker". */
export function faceName(face) {
  const suit = SUITS[face.slice(1)];
  if (suit && /^[1-9]$/.test(face[0])) return `${face[0]} ${suit[0]}`;
  return HONOURS[face]?.[0] ?? face;
}

/** Tile ids as words: "3 Crak, 7 Dot, North Wind". */
export const tilesInWords = (ids) => ids.map((id) => faceName(faceOf(id))).join(", ");

const NS = "http://www.w3.org/2000/svg";

/** The small picture of a face (decorative: the words carry the meaning). */
function picture(face) {
  const kind = /^[1-9][BCD]$/.test(face) ? face[1] : face;
  const shapes = {
    // a bamboo stick with its nodes
    B: '<rect x="15" y="3" width="10" height="34" rx="4" fill="currentColor"/><rect x="13" y="12" width="14" height="3" fill="currentColor"/><rect x="13" y="25" width="14" height="3" fill="currentColor"/>',
    // a seal stamp with a character's strokes
    C: '<rect x="5" y="5" width="30" height="30" rx="3" fill="none" stroke="currentColor" stroke-width="4"/><path d="M11 15h18M20 10v22M12 24h16M13 31l7-7 7 7" stroke="currentColor" stroke-width="3" fill="none"/>',
    // a coin: ring and centre
    D: '<circle cx="20" cy="20" r="15" fill="none" stroke="currentColor" stroke-width="4"/><circle cx="20" cy="20" r="6" fill="currentColor"/>',
    // red: a filled box with a bar through it; green: a leaf; white: an empty frame
    RD: '<rect x="6" y="6" width="28" height="28" rx="2" fill="currentColor"/><path d="M20 9v22M11 16h18v8H11z" stroke="#fff" stroke-width="3" fill="none"/>',
    GD: '<path d="M20 4C8 14 8 28 20 36C32 28 32 14 20 4z" fill="currentColor"/><path d="M20 10v24" stroke="#fff" stroke-width="2.5"/>',
    WD: '<rect x="5" y="7" width="30" height="26" rx="2" fill="none" stroke="currentColor" stroke-width="3.5"/><rect x="11" y="13" width="18" height="14" fill="none" stroke="currentColor" stroke-width="2"/>',
    F: '<g fill="currentColor"><circle cx="20" cy="9" r="6"/><circle cx="30" cy="17" r="6"/><circle cx="26" cy="29" r="6"/><circle cx="14" cy="29" r="6"/><circle cx="10" cy="17" r="6"/></g><circle cx="20" cy="20" r="5" fill="#f3b33d"/>',
  };
  const body = shapes[kind];
  if (!body) return null;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 40 40");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.classList.add("pict");
  svg.innerHTML = body;
  return svg;
}

function span(cls, text, hidden = false) {
  const el = document.createElement("span");
  el.className = cls;
  el.textContent = text;
  if (hidden) el.setAttribute("aria-hidden", "true");
  return el;
}

/** One tile as a button (or a span, for lists): data-id and data-face for the page's logic.
 * Its name comes from its visible words; `note` adds a visible line ("from North"). */
export function tileElement(tile, { tag = "button", note = "" } = {}) {
  const el = document.createElement(tag);
  el.className = "tile";
  el.dataset.id = tile.id;
  el.dataset.face = tile.face;
  const face = tile.face;
  const suit = SUITS[face.slice(1)];
  if (suit && /^[1-9]$/.test(face[0])) {
    el.classList.add(suit[1]);
    el.append(span("big", face[0]), picture(face), span("small", ` ${suit[0]}`));
  } else {
    const [name, glyph, kind] = HONOURS[face] ?? [face, face, ""];
    el.classList.add(...kind.split(" ").filter(Boolean));
    if (glyph) el.append(span("big", glyph, true));
    const pict = picture(face);
    if (pict) el.append(pict);
    if (face === "WD") el.append(span("sr-only", "White Dragon, "), span("small", "Soap"));
    else if (kind.startsWith("dragon")) el.append(span("small", name.split(" ")[0]), span("sr-only", " Dragon"));
    else el.append(span("small", name));
  }
  if (note) el.append(span("note", ` ${note}`));
  if (tag === "button") el.type = "button";
  return el;
}

export const SEATS = ["east", "south", "west", "north"];
export const title = (word) => (word ? word[0].toUpperCase() + word.slice(1) : "");

/** A declared hand with its article: "a Heavenly Hand", "an Earthly Hand". */
export const aHand = (kind) => `${/^[aeiou]/i.test(kind ?? "") ? "an" : "a"} ${title(kind)} Hand`;

/** Where another seat sits as seen from `me`: right, across or left (the pass directions). */
export function placeOf(me, seat) {
  const d = (SEATS.indexOf(seat) - SEATS.indexOf(me) + 4) % 4;
  return ["me", "right", "across", "left"][d];
}
