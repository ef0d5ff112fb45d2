// The desk's readings of the record: one line per timeline row (time, seat, tiles, blind
// and clock markers, rulings) and "who gave what to whom" per pass, with a tile's route.
// Seats are named as the director knows them (`name(seat)`: "Ann (East)").

import { faceName, title } from "./tiles.js";
import { clockTime, element } from "./console.js";

/** id -> face, from the director's view of the deal (every passed tile was dealt). */
export function facesOf(view) {
  const faces = new Map();
  for (const seat of Object.values(view.seats)) {
    for (const t of [...seat.rack, ...seat.received]) faces.set(t.id, t.face);
  }
  return faces;
}

const LABELS = {
  game_created: "game created",
  pass_confirmed: "confirms",
  pass_changed: "changes",
  pass_withdrawn: "withdraws",
  tiles_transferred: "gives",
  pass_resolved: "pass resolved",
  tiles_placed: "places",
  vote_cast: "votes",
  courtesy_offered: "offers",
  courtesy_agreed: "courtesy agreed",
  state_changed: "state",
  charleston_ended: "Charleston over",
  mah_jongg_declared: "declares Mah Jongg",
  declaration_judged: "verdict",
  clock_expired: "clock acted",
  seat_late: "late",
  clock_paused: "clock paused",
  clock_resumed: "clock resumed",
  ruling_recorded: "ruling",
};

const CLOCK_TYPES = new Set(["clock_expired", "seat_late", "clock_paused", "clock_resumed"]);

/** The pass a row belongs to (its step), for the pass filter. */
export function stepOf(e) {
  return e.step ?? e.payload?.step ?? null;
}

/** Words and tiles of one timeline row, as the director reads it. */
export function rowParts(e, faces, name = title) {
  const p = e.payload || {};
  const tiles = (list) => (list || []).map((t) => faceName(faces.get(t) || "?")).join(", ");
  const parts = { label: LABELS[e.type] || e.type.replaceAll("_", " "), detail: "", marks: [] };
  if (e.type === "pass_confirmed" || e.type === "pass_changed") {
    parts.detail = tiles(p.tiles);
    if (p.blind) parts.marks.push(`blind ${p.blind}`);
  } else if (e.type === "tiles_transferred") {
    parts.detail = `to ${name(p.receiver)}: ${tiles(p.from_hand)}`;
    if (p.forwarded?.length) parts.marks.push(`forwards ${p.forwarded.length} unseen: ${tiles(p.forwarded)}`);
  } else if (e.type === "tiles_placed") {
    parts.detail = tiles(p.tiles);
  } else if (e.type === "vote_cast") {
    parts.detail = p.choice + (p.late ? " (late objection)" : "");
  } else if (e.type === "courtesy_offered" || e.type === "courtesy_agreed") {
    parts.detail = String(p.count);
  } else if (e.type === "pass_resolved") {
    parts.detail = p.label || "";
    if (p.blind) parts.marks.push("blind");
  } else if (e.type === "state_changed") {
    parts.detail = (p.to || []).join(" · ");
  } else if (e.type === "charleston_ended") {
    parts.detail = p.reason;
  } else if (e.type === "mah_jongg_declared") {
    parts.detail = `${p.kind} hand (${p.verdict})`;
  } else if (e.type === "declaration_judged") {
    parts.detail = `${p.kind} hand ${p.verdict}: ${p.text}`;
    parts.marks.push("ruling");
  } else if (e.type === "ruling_recorded") {
    parts.detail = `${p.kind.toUpperCase()}: ${p.text}`;
    parts.marks.push("ruling");
  } else if (CLOCK_TYPES.has(e.type)) {
    parts.marks.push("clock");
    if (e.type === "clock_expired") parts.detail = `${p.kind}: ${p.done ?? ""}`;
    if (e.type === "seat_late") parts.detail = p.kind || "";
    if (e.type === "clock_resumed") parts.detail = `after ${Number(p.paused_seconds || 0).toFixed(1)} s`;
  }
  return parts;
}

/** One row as a button inside a list item: reachable by Tab, Enter replays the table there. */
export function timelineRow(e, faces, onPick, name = title) {
  const li = element("li");
  li.value = e.seq;
  li.dataset.seq = e.seq;
  li.dataset.type = e.type;
  const parts = rowParts(e, faces, name);
  const button = element("button", "", "timeline-row");
  button.type = "button";
  button.append(
    element("span", `#${e.seq}`, "t-seq"),
    element("span", clockTime(e.created_at), "t-time"),
    element("span", e.seat ? name(e.seat) : "table", "t-seat"),
    element("span", parts.label, "t-type"),
  );
  if (parts.detail) button.append(element("span", parts.detail, "t-detail"));
  for (const mark of parts.marks) {
    const kind = mark.startsWith("blind") || mark.startsWith("forwards") ? "blind" : mark;
    button.append(element("span", mark, `t-mark mark-${kind}`));
  }
  button.addEventListener("click", () => onPick(e.seq));
  li.append(button);
  return li;
}

/** The route of one tile through every pass, in the order it travelled: "West → South
 * (First Left) · then South → East (…)". Within a blind pass the resolution records the
 * handovers in the order the IOU chain settles them, not the tile's own order: the pass's
 * route of the tile (its `blind_routes`) gives that. */
export function routeOf(tile, passes, name = title) {
  const legs = [];
  for (const pass of passes) {
    const path = pass.blind_routes?.[String(tile)];
    const moves = path
      ? path.slice(1).map((to, i) => ({ giver: path[i], receiver: to, unseen: i > 0 }))
      : pass.transfers
        .filter((t) => t.from_hand.includes(tile) || t.forwarded.includes(tile))
        .map((t) => ({ giver: t.giver, receiver: t.receiver, unseen: t.forwarded.includes(tile) }));
    for (const m of moves) {
      const seq = pass.transfers.find((t) => t.giver === m.giver && t.receiver === m.receiver)?.seq;
      legs.push(`${name(m.giver)} → ${name(m.receiver)} (${pass.label}${m.unseen ? ", forwarded unseen" : ""}${seq ? `, seq ${seq}` : ""})`);
    }
  }
  return legs;
}

/** The transfers of one pass as a table: giver, receiver, tiles (each a button). */
export function transfersTable(pass, faces, onTile, name = title) {
  const table = element("table", "", "transfers");
  const caption = element("caption", `${pass.label}${pass.blind ? " (blind)" : ""}`);
  const head = element("tr");
  for (const h of ["From", "To", "Tiles from the hand", "Forwarded unseen"]) {
    const th = element("th", h);
    th.scope = "col";
    head.append(th);
  }
  table.append(caption, head);
  for (const t of pass.transfers) {
    const row = element("tr");
    row.append(element("td", name(t.giver)), element("td", name(t.receiver)));
    for (const list of [t.from_hand, t.forwarded]) {
      const cell = element("td");
      for (const id of list) {
        const b = element("button", faceName(faces.get(id) || "?"), "tile-chip");
        b.type = "button";
        b.setAttribute("aria-label", `${faceName(faces.get(id) || "?")} (tile ${id}): show its route`);
        b.addEventListener("click", () => onTile(id));
        cell.append(b);
      }
      row.append(cell);
    }
    table.append(row);
  }
  if (!pass.transfers.length) {
    const row = element("tr");
    const cell = element("td", "No tile moved in this pass.");
    cell.colSpan = 4;
    row.append(cell);
    table.append(row);
  }
  return table;
}
