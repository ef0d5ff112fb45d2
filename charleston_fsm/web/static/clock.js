// The seat's own deadline as people can see it: a countdown with its own contrast, urgent
// in its last seconds, paused said in words, and spoken at a few thresholds. A seat that
// ran late earlier keeps a quiet note, never in the countdown's place.

import { $ } from "./dom.js";
import { fullName } from "./table_state.js";

let say = () => {};

/** Redraw twice a second from the clock `current()` returns; `speak` announces. */
export function startClock(current, speak) {
  say = speak;
  setInterval(() => renderClock(current()), 500);
}

const KIND_WORDS = {
  confirm_pass: "to pass",
  vote: "to vote",
  courtesy: "for the courtesy pass",
  place_tiles: "to place your tiles",
};
let spokenAt = null;

/** The deadline's moment, from its ISO text (microseconds cut to what Date reads). */
const dueOf = (c) => (c?.due_at ? Date.parse(c.due_at.replace(/(\.\d{3})\d*Z$/, "$1Z")) : null);

/** The start gate and the bot, in words: what holds this seat besides its deadline. */
function renderGate(c) {
  const gate = $("gate-note");
  if (!gate) return;
  let text = "";
  if (c?.held) {
    text = `The table has not started: ${startsWhen(c)}. Look at your rack and lift tiles meanwhile.`;
  } else if (c?.bot) {
    text = "The service's bot plays your seat now (the director handed it over); ask the director to hand it back.";
  }
  gate.hidden = !text;
  if (gate.textContent !== text) gate.textContent = text;
}

const clockTime = (at) => new Date(at).toLocaleTimeString([], { hour12: false });

/** How a held table starts, in words: at its time (with the time), once every player
 * has opened their link (with who is still missing), or when the director starts it. */
export function startsWhen(c) {
  if (c.start_at) return `it starts by itself at ${clockTime(c.start_at)}`;
  if (c.awaiting) {
    const missing = c.awaiting.map(fullName);
    return missing.length
      ? `it starts by itself once all four players have opened their links; still missing: ${missing.join(", ")}`
      : "it starts now: every player is here";
  }
  return "the director starts it from the desk";
}

/** When a held seat may pass, in words: "you pass once …". */
export function passOnce(c) {
  if (c.start_at) return `it starts at ${clockTime(c.start_at)}`;
  if (c.awaiting) {
    const missing = c.awaiting.map(fullName);
    return `all four players have opened their links${missing.length ? ` (still missing: ${missing.join(", ")})` : ""}`;
  }
  return "the director starts it";
}

export function renderClock(c) {
  renderGate(c);
  const el = $("countdown");
  const note = $("late-note");
  const due = dueOf(c);
  const timed = c && c.kind !== "bot" && !c.held && !c.bot;
  if (note) {
    note.hidden = !(timed && c.late && !c.flagged);
    note.textContent = note.hidden ? "" : "You ran out of time earlier in this game; the director sees it.";
  }
  el.hidden = !timed || !(due || c.paused);
  const dock = $("countdown-dock");
  if (dock) dock.hidden = el.hidden;
  if (el.hidden) return;
  const left = due ? Math.max(0, Math.ceil((due - Date.now()) / 1000)) : null;
  let text;
  let state;
  if (c.paused) {
    state = "paused";
    text = "Clock paused by the director";
  } else if (c.flagged) {
    state = "late";
    text = "Late: your time ran out and you are flagged. You may still act; the director decides.";
  } else {
    state = left <= 5 ? "urgent" : "running";
    text = `${left} s left ${KIND_WORDS[c.kind] ?? ""}`.trim();
    if (c.extended) text += ` (the director added ${c.extended.seconds} s${c.extended.reason ? `: ${c.extended.reason}` : ""})`;
    const mark = `${c.due_at}:${left}`;
    if ([30, 10, 5].includes(left) && c.seconds > left && spokenAt !== mark) {
      spokenAt = mark;
      say(`${left} seconds left ${KIND_WORDS[c.kind] ?? ""}.`);
    }
  }
  for (const shown of [el, dock]) {
    if (!shown) continue;
    shown.dataset.state = state;
    if (shown.textContent !== text) shown.textContent = text;
  }
}
