// What happened at the table, in words, folded from the seat's own redacted events
// (GET …/events, then the stream). Only what this seat may see: its own tiles given and
// received, and the table's public talk (votes, offers, the clock's acts).

import { joined } from "./dom.js";
import { aHand, faceName, faceOf, placeOf, tilesInWords, title } from "./tiles.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The pass direction of a receiver as seen from `me`: "Right", "Across", "Left". */
export const directionWord = (me, seat) => title(placeOf(me, seat));

/** What the record's end reasons mean for a player (the view says the rest). */
const ENDED = {
  "Heavenly Hand declared": (name) => `${name("east")} declared a Heavenly Hand`,
};

export class History {
  /** `name(seat)` names another seat as people know it ("Ann", or "South"). */
  constructor(me, name = title) {
    this.me = me;
    this.nameOf = name;
    this.entries = []; // {seq, kind, text, lines}
    this.from = new Map(); // received tile id -> the seat that sent it
    this.blind = new Set(); // received tile ids that came through a blind pass
    this.pending = { gave: [], got: [] };
    this.clockOpen = null; // the clock's pass for this seat, until the pass resolves
    this.clock = null; // the clock's entry for this seat, while its command is awaited
    this.lastPass = null;
    this.dropped = null; // a late objection that dropped this seat's confirmed pass
    this.lastVerdict = null; // the director's last verdict on East's hand, with its reason
    this.takeover = null; // the greeting of a substitute: this seat's newest hand-over to a person
    this.seen = 0;
  }

  /** Fold one event; returns the entries it added or completed (to announce). */
  add(event, stepTo = null) {
    if (event.seq && event.seq <= this.seen) return [];
    if (event.seq) this.seen = event.seq;
    const me = this.me;
    const who = event.seat;
    const p = event.payload || {};
    const mine = who === me;
    const other = this.nameOf;
    const name = (s) => (s === me ? "you" : other(s));
    const Name = (s) => (s === me ? "You" : other(s));
    const entry = (kind, text, lines = []) => {
      const e = { seq: event.seq, kind, text, lines };
      this.entries.push(e);
      return [e];
    };
    if (this.clock && mine && event.type !== "clock_expired") {
      // the command the clock gave in this seat's name, with its tiles (own events only)
      const e = this.clock;
      this.clock = null;
      if (event.type === "pass_confirmed") {
        e.tiles = p.tiles || [];
        e.blindCount = p.blind || 0;
        e.to = e.to || stepTo;
        e.text = clockPassText(me, e, other);
        this.clockOpen = e;
        return [e];
      }
    }
    switch (event.type) {
      case "tiles_transferred":
        if (mine) {
          this.pending.gave.push({ to: p.receiver, ids: p.from_hand || [], forwarded: p.forwarded_count || 0 });
          if (this.clockOpen) {
            this.clockOpen.to = p.receiver;
            this.clockOpen.text = clockPassText(me, this.clockOpen, this.nameOf);
          }
        }
        if (p.receiver === me) {
          const blind = new Set(p.kept_blind || []);
          for (const id of p.kept || []) {
            this.from.set(id, who);
            if (blind.has(id)) this.blind.add(id);
          }
          this.pending.got.push({ from: who, ids: p.kept || [], blind: [...blind], on: p.forwarded_on_count || 0 });
        }
        return [];
      case "pass_resolved": {
        const { gave, got } = this.pending;
        this.pending = { gave: [], got: [] };
        this.clockOpen = null;
        const lines = [];
        for (const g of gave) {
          const parts = [];
          if (g.ids.length) parts.push(tilesInWords(g.ids));
          if (g.forwarded) parts.push(`${plural(g.forwarded, "unseen tile")} forwarded blind`);
          lines.push(`You gave ${parts.join(" and ") || "nothing"} to ${other(g.to)} (${directionWord(me, g.to)}).`);
        }
        for (const g of got) {
          let line = `From ${other(g.from)}: ${g.ids.length ? tilesInWords(g.ids) : "nothing you kept"}.`;
          if (g.blind.length) line += ` ${tilesInWords(g.blind)} came through a blind pass (${other(g.from)} forwarded ${g.blind.length === 1 ? "it" : "them"} unseen).`;
          if (g.on) line += ` You forwarded ${plural(g.on, "arriving tile")} on unseen.`;
          lines.push(line);
        }
        if (!lines.length) lines.push(p.moved ? "Other seats passed; you were not in this pass." : "No tile moved.");
        const [e] = entry("pass", p.label || "A pass", lines);
        this.lastPass = e;
        return [e];
      }
      case "clock_expired": {
        if (mine) {
          const [e] = entry("clock", `Your time ran out: the clock ${p.done || "acted"} for you.`);
          e.done = p.done;
          e.command = p.command;
          this.clock = e;
          return [e];
        }
        const done = (p.done || "acted").replace("your", "their");
        return entry("clock", `${other(who)}'s time ran out: the clock ${done} for ${other(who)}.`);
      }
      case "seat_late":
        return entry("clock", mine ? "Your time ran out: you are flagged late (the director decides)." : `${other(who)}'s time ran out: flagged late.`);
      case "clock_paused":
        return entry("clock", "The director paused the clock.");
      case "clock_resumed":
        return entry("clock", "The director resumed the clock.");
      case "ruling_recorded": {
        const about = who ? ` about ${name(who)}` : "";
        const words = p.text ? `: ${p.text}` : "";
        return entry("ruling", `The director recorded a ${p.kind || "ruling"}${about}${words}${/[.!?…]$/.test(words) ? "" : "."}`);
      }
      case "declaration_judged": {
        this.lastVerdict = { kind: p.kind, verdict: p.verdict, text: p.text };
        const hand = `${p.kind === "earthly" ? "Earthly" : "Heavenly"} Hand`;
        const whose = me === "east" ? `your ${hand}` : `${other("east")}'s ${hand}`;
        const effect = p.verdict === "valid"
          ? "The game ends with this hand."
          : p.kind === "heavenly" ? "It is set aside: the Charleston is played from the First Right." : "The Charleston stays complete.";
        return entry("ruling", `The director judged ${whose} ${p.verdict}${p.text ? `: “${p.text}”` : ""}. ${effect}`);
      }
      case "vote_cast": {
        if (p.late) {
          const dropped = (p.dropped || []).map(name);
          const lines = dropped.length ? [`Confirmed passes dropped, no tile moved: ${joined(dropped)}.`] : [];
          if ((p.dropped || []).includes(me) && !mine) this.dropped = { by: who, seq: event.seq };
          return entry("vote", `${Name(who)} objected late and stopped the Charleston.`, lines);
        }
        const verb = p.choice === "stop" ? "voted to stop the Charleston" : "voted to continue";
        return entry("vote", `${Name(who)} ${verb}.`);
      }
      case "courtesy_offered":
        return entry("courtesy", `${Name(who)} offered ${plural(p.count, "tile")} for the courtesy pass.`);
      case "courtesy_agreed": {
        const pair = (p.pair || []).map(name).join(" and ");
        return entry("courtesy", `Courtesy pass: ${pair} agreed on ${plural(p.count, "tile")}.`);
      }
      case "mah_jongg_declared":
        return entry("declare", `${Name(who)} declared Mah Jongg${p.kind ? `: ${aHand(p.kind)}` : ""}.`);
      case "ding_dong_requested":
        return entry("dingdong", `${Name(who)} requested a Ding Dong.`);
      case "ready_declared":
        return entry("dingdong", `${Name(who)} declared Ready: no more Ding Dong.`);
      case "ding_dong_closed":
        return entry("dingdong", "The Ding Dong window closed.");
      case "pass_withdrawn":
        return mine ? entry("pass", "You withdrew your pass.") : [];
      case "game_started": {
        const at = p.at ? new Date(p.at).toLocaleTimeString([], { hour12: false }) : "";
        if (p.scheduled) return entry("clock", `The table started at its start time, ${at}: the clock runs from then.`);
        if (p.seated) return entry("clock", `Every player has opened their link: the table started at ${at}; the clock runs from then.`);
        return entry("clock", "The director started the table: the clock runs from now.");
      }
      case "seat_arrived":
        return mine ? [] : entry("seat", `${Name(who)} opened their link.`);
      case "time_extended": {
        const mineToo = !who || mine;
        const why = p.reason ? ` (${p.reason})` : "";
        if (!mineToo) return entry("clock", `The director gave ${other(who)} ${plural(p.seconds, "more second")}${why}.`);
        return entry("clock", `The director gave ${who ? "you" : "every seat still deciding"} ${plural(p.seconds, "more second")}${why}.`);
      }
      case "seat_taken": {
        if (mine && p.token_replaced) {
          // the page's holder is the substitute: only they hold the seat's new link
          this.takeover = `You take over ${title(me)}${p.name ? `, ${p.name}` : ""}: the director gave you this seat, and you play it from here on.`;
          return entry("seat", this.takeover);
        }
        if (mine) {
          return entry("seat", p.by === "bot"
            ? "The director handed your seat to the service's bot: it plays for you until the director hands it back."
            : `The director handed your seat back${p.label ? ` (${p.label})` : ""}: you play again.`);
        }
        if (p.by === "bot") return entry("seat", `${other(who)} is now played by the service's bot.`);
        if (p.token_replaced) return entry("seat", `${title(who)} is now played by ${p.name || "a substitute"}.`);
        return entry("seat", `${other(who)} is now played by ${p.label || "a player"}.`);
      }
      case "director_called":
        return entry("call", mine ? "You called the director." : `${other(who)} called the director.`);
      case "call_answered":
        return entry("call", `The director answered ${mine ? "your" : `${other(who)}'s`} call${p.answer === "cleared" ? ": all clear" : " with a ruling"}.`);
      case "charleston_ended": {
        const why = ENDED[p.reason]?.((s) => (s === me ? "you" : other(s)));
        return entry("end", `The Charleston is over${why ? `: ${why}` : ""}.`);
      }
      default:
        return [];
    }
  }
}

function clockPassText(me, e, name) {
  const words = e.tiles.map((id) => faceName(faceOf(id)));
  if (e.blindCount) words.push(plural(e.blindCount, "unseen tile"));
  const to = e.to ? ` to ${name(e.to)}` : "";
  return `Your time ran out: the clock passed ${joined(words) || "no tile"} for you${to}.`;
}

/** A received tile's note: who sent it, and whether it came blind. */
export function arrivalNote(history, id) {
  const from = history.from.get(id);
  if (!from) return "";
  const who = history.nameOf(from);
  return history.blind.has(id) ? `from ${who}, blind` : `from ${who}`;
}

export { faceName, faceOf };
