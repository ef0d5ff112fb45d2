// Tile faces as people read them: suit colours, numbers, winds, dragons, flowers, jokers.

const SUITS = { B: ["Bam", "bam"], C: ["Crak", "crak"], D: ["Dot", "dot"] };
const HONOURS = {
  EW: ["East Wind", "E", "wind"],
  SW: ["South Wind", "S", "wind"],
  WW: ["West Wind", "W", "wind"],
  NW: ["North Wind", "N", "wind"],
  RD: ["Red Dragon", "◆", "dragon red"],
  GD: ["Green Dragon", "◆", "dragon green"],
  WD: ["White Dragon", "◇", "dragon white"],
  F: ["Flower", "✿", "flower"],
  J: ["Joker", "J", "joker"],
};

/** The accessible name of a face: "5 Bam", "Red Dragon", "Joker". */
export function faceName(face) {
  const suit = SUITS[face.slice(1)];
  if (suit && /^[1-9]$/.test(face[0])) return `${face[0]} ${suit[0]}`;
  return HONOURS[face]?.[0] ?? face;
}

/** One tile as a button: data-id and data-face for the page's own logic. */
export function tileElement(tile, { tag = "button" } = {}) {
  const el = document.createElement(tag);
  el.className = "tile";
  el.dataset.id = tile.id;
  el.dataset.face = tile.face;
  el.setAttribute("aria-label", faceName(tile.face));
  el.title = faceName(tile.face);
  const suit = SUITS[tile.face.slice(1)];
  let big;
  let small;
  let kind;
  if (suit && /^[1-9]$/.test(tile.face[0])) {
    big = tile.face[0];
    small = suit[0];
    kind = suit[1];
  } else {
    const [name, glyph, cls] = HONOURS[tile.face] ?? [tile.face, tile.face, ""];
    big = glyph;
    kind = cls;
    small = tile.face === "J" ? "Joker" : tile.face === "WD" ? "Soap" : name.split(" ")[kind.startsWith("dragon") ? 0 : 1] ?? name;
  }
  el.classList.add(...kind.split(" ").filter(Boolean));
  const top = document.createElement("span");
  top.className = "big";
  top.textContent = big;
  const bottom = document.createElement("span");
  bottom.className = "small";
  bottom.textContent = small;
  el.append(top, bottom);
  if (tag === "button") el.type = "button";
  return el;
}

export const SEATS = ["east", "south", "west", "north"];
export const title = (word) => (word ? word[0].toUpperCase() + word.slice(1) : "");
