// The audit as the director reads it: one sentence per row of the record, with tile names
// and players' names ("Bea (South) gave 3 Bam, 9 Crak and Flower to Cy (West)"); the seq,
// the time and the tile ids follow in a small details line.

import { element, joined } from "./dom.js";
import { aHand, faceName, title } from "./tiles.js";
import { clockTime, duration } from "./console.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Sentences for the director: `faces` maps a tile id to its face, `name(seat)` names a
 * seat, `stateName(id)` names a chart state, `ending` is how a finished table ended in
 * words (the view's, said by the last end row: the record's reason alone says "all
 * passes complete" after a stop; it stays on that row's details line). Returns {seq,
 * kind, text, ids} per row. */
export function storyOf(events, faces, current, stateName, ending = null) {
  // each row names a seat's player of its moment: the deal's, then each substitute's
  const then = new Map();
  const name = (seat) => {
    if (!then.has(seat)) return current(seat);
    const given = then.get(seat);
    return given ? `${given} (${title(seat)})` : title(seat);
  };
  const lastEnd = events.findLast((e) => e.type === "charleston_ended")?.seq;
  const face = (id) => faceName(faces.get(id) || "?");
  const tiles = (ids) => joined((ids || []).map(face)) || "no tile";
  const code = (ids) => (ids || []).map((id) => `${faces.get(id) || "?"}#${id}`).join(", ");
  const out = [];
  for (const e of events) {
    const p = e.payload || {};
    if (e.type === "game_created") for (const seat of ["east", "south", "west", "north"]) then.set(seat, p.players?.[seat] || null);
    const who = e.seat ? name(e.seat) : ""; // a substitute replaces the player named here
    if (e.type === "seat_taken" && p.token_replaced) then.set(e.seat, p.name || null);
    let text = "";
    let kind = "row";
    let ids = [];
    switch (e.type) {
      case "game_created":
        text = `The game was created (${p.ruleset}${p.seed !== null && p.seed !== undefined ? `, deal ${p.seed}` : ""}).`;
        kind = "start";
        break;
      case "pass_confirmed":
      case "pass_changed": {
        const verb = e.type === "pass_confirmed" ? "chose" : "changed the choice to";
        text = `${who} ${verb} ${tiles(p.tiles)}${p.blind ? ` and ${plural(p.blind, "arriving tile")} to forward unseen` : ""}.`;
        ids = p.tiles;
        break;
      }
      case "pass_withdrawn":
        text = `${who} withdrew the choice.`;
        break;
      case "tiles_transferred": {
        const forwarded = p.forwarded?.length ? `, and forwarded ${tiles(p.forwarded)} unseen` : "";
        text = `${who} gave ${p.from_hand?.length ? tiles(p.from_hand) : "no tile from the hand"} to ${name(p.receiver)}${forwarded}.`;
        ids = [...(p.from_hand || []), ...(p.forwarded || [])];
        kind = "transfer";
        break;
      }
      case "pass_resolved":
        text = `${p.label || "The pass"} resolved${p.blind ? " (a blind pass)" : ""}${p.moved ? "." : ": nothing moved."}`;
        kind = "resolved";
        break;
      case "tiles_placed":
        text = `${who} placed ${tiles(p.tiles)} in the rack.`;
        ids = p.tiles;
        break;
      case "vote_cast":
        text = p.late
          ? `${who} objected late and stopped the Charleston${p.dropped?.length ? `; the confirmed choices of ${joined(p.dropped.map(name))} were dropped, no tile moved` : ""}.`
          : `${who} voted to ${p.choice === "stop" ? "stop the Charleston" : "continue"}.`;
        kind = "vote";
        break;
      case "courtesy_offered":
        text = `${who} offered ${plural(p.count, "courtesy tile")}.`;
        break;
      case "courtesy_agreed":
        text = `${joined((p.pair || []).map(name))} agreed on ${plural(p.count, "courtesy tile")}.`;
        break;
      case "state_changed":
        text = `Now: ${joined((p.to || []).map(stateName).filter(Boolean)) || (p.to || []).join(", ")}.`;
        kind = "state";
        break;
      case "charleston_ended":
        text = ending && e.seq === lastEnd ? `The Charleston is over. ${ending}` : `The Charleston ended: ${p.reason}.`;
        kind = "end";
        break;
      case "mah_jongg_declared":
        text = `${who} declared Mah Jongg: ${aHand(p.kind)} (${p.verdict}).`;
        kind = "declare";
        break;
      case "declaration_judged":
        text = `The director judged the ${title(p.kind)} Hand ${p.verdict}: “${p.text}”.`;
        kind = "ruling";
        break;
      case "ruling_recorded":
        text = `The director recorded a ${p.kind}${e.seat ? ` about ${who}` : ""}: “${p.text}”.`;
        kind = "ruling";
        break;
      case "clock_expired":
        text = `${who}'s time ran out (${plural(p.seconds, "second")}): the clock ${(p.done || "acted").replace("your", "their")} in ${who}'s name.`;
        kind = "clock";
        break;
      case "seat_late":
        text = `${who}'s time ran out (${plural(p.seconds, "second")}): flagged late.`;
        kind = "clock";
        break;
      case "clock_paused":
        text = p.round ? "The director paused the whole round's clocks." : "The director paused the clock.";
        kind = "clock";
        break;
      case "clock_resumed":
        text = `The director resumed ${p.round ? "the whole round's clocks" : "the clock"} (paused ${Number(p.paused_seconds || 0).toFixed(1)} s).`;
        kind = "clock";
        break;
      case "game_started":
        text = `The table started ${p.scheduled ? "at its start time" : p.seated ? "once every player had opened their link" : p.round ? "with the whole round" : "when the director started it"} (held ${duration(p.held_seconds || 0)}).`;
        kind = "clock";
        break;
      case "seat_arrived":
        text = `${who} opened their link${p.waiting?.length ? ` (still awaited: ${p.waiting.map(title).join(", ")})` : ""}.`;
        kind = "clock";
        break;
      case "time_extended":
        text = `The director added ${plural(p.seconds, "second")} for ${who || "every seat still deciding"}${p.reason ? `: “${p.reason}”` : ""}.`;
        kind = "clock";
        break;
      case "seat_taken":
        text = p.by === "bot"
          ? `The director handed ${who} to the service's bot.`
          : `${(p.token_replaced ? p.name : null) || p.label || "A person"} plays ${who} now${p.token_replaced ? `, with a new link (the old one opens nothing)${p.name && p.label ? `; ${p.label}` : ""}${p.player_id ? `; player id ${p.player_id}` : ""}${p.deadline === "kept" ? "; the seat's time left kept" : ""}` : ""}.`;
        kind = "ruling";
        break;
      case "director_called":
        text = `${who} called the director${p.reason ? `: “${p.reason}”` : ""}.`;
        kind = "ruling";
        break;
      case "call_answered":
        text = `The director answered ${who}'s call: ${p.answer === "cleared" ? "all clear" : "with the ruling above"} (it waited ${duration(p.waited_seconds || 0)}).`;
        kind = "ruling";
        break;
      case "spectator_link":
        text = p.action === "revoked" ? "The director revoked the spectator link." : `The director issued a spectator link (${p.delay ? `${duration(p.delay)} behind` : "live"}).`;
        break;
      case "ding_dong_requested":
        text = `${who} asked for Ding Dong number ${p.number}.`;
        break;
      case "ding_dong_given":
        text = `${who} gave ${joined((p.gifts || []).map((g) => `${face(g.tile)} to ${name(g.to)}`))}.`;
        ids = (p.gifts || []).map((g) => g.tile);
        break;
      case "ready_declared":
        text = `${who} declared Ready: no more Ding Dong.`;
        break;
      case "ding_dong_closed":
        text = "The director closed the Ding Dong window.";
        break;
      default:
        text = `${who ? `${who}: ` : ""}${e.type.replaceAll("_", " ")}.`;
    }
    const recorded = kind === "end" && ending && e.seq === lastEnd ? `recorded reason: ${p.reason}` : "";
    out.push({ seq: e.seq, at: e.created_at, kind, text, ids: recorded || code(ids) });
  }
  return out;
}

/** The story as list items: the sentence, then "seq 12 · 14:02:07 · 3B#9, 9C#68". */
export function storyItem(line) {
  const li = element("li");
  li.dataset.seq = line.seq;
  li.dataset.kind = line.kind;
  li.value = line.seq;
  li.append(element("span", line.text, "s-text"));
  const detail = [`seq ${line.seq}`, clockTime(line.at), line.ids].filter(Boolean).join(" · ");
  li.append(element("span", detail, "s-detail"));
  return li;
}
