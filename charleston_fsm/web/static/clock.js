// The seat's own deadline as people can see it: a countdown with its own contrast, urgent
// in its last seconds, paused and late said in words, and spoken at a few thresholds.

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

export function renderClock(c) {
  const el = document.getElementById("countdown");
  const due = c?.due_at ? Date.parse(c.due_at.replace(/(\.\d{3})\d*Z$/, "$1Z")) : null;
  el.hidden = !c || (!due && !c.paused && !c.late) || c.kind === "bot";
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
  } else if (due) {
    state = left <= 5 ? "urgent" : "running";
    text = `${left} s left ${KIND_WORDS[c.kind] ?? ""}`.trim();
    const mark = `${c.due_at}:${left}`;
    if ([30, 10, 5].includes(left) && c.seconds > left && spokenAt !== mark) {
      spokenAt = mark;
      say(`${left} seconds left ${KIND_WORDS[c.kind] ?? ""}.`);
    }
  } else {
    state = "late";
    text = "Late: you ran out of time earlier in this game.";
  }
  el.dataset.state = state;
  if (el.textContent !== text) el.textContent = text;
}

