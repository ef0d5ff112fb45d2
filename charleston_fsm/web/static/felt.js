// The felt around the rack: the three other seats (names, tile counts, who is ready, who
// voted what), the centre (which pass of how many, the arrow to the receiver, whose turn),
// the table's talk in one line, and the ending in words. Everything is read from the view:
// its phase, pass number and total, players and ending (never guessed from state ids).

import { $, element, joined } from "./dom.js";
import { fullName, nameOf, state } from "./table_state.js";
import { SEATS, aHand, placeOf, title } from "./tiles.js";

const SIDES = { right: "on your right", across: "across from you", left: "on your left" };

function seatStatus(v, seat) {
  const g = v.game;
  const parts = [];
  for (const step of g.steps) {
    if (!step.participants.includes(seat)) continue;
    parts.push(step.confirmed.includes(seat) ? `${nameOf(seat)} is ready` : "choosing…");
  }
  const vote = g.votes?.[seat];
  if (vote) parts.push(vote === "stop" ? "voted to stop" : "voted to continue");
  else if (g.phase === "vote") parts.push("has not voted yet");
  const offer = v.courtesy?.offers?.[seat];
  if (offer !== undefined) parts.push(`offers ${offer}`);
  return parts;
}

export function renderSeats(v) {
  const box = $("others");
  for (const old of box.querySelectorAll(".seat-box")) old.remove();
  const to = v.step?.to;
  const from = v.step?.from;
  for (const seat of SEATS) {
    if (seat === v.seat) continue;
    const where = placeOf(v.seat, seat);
    const el = element("div", "", "seat-box");
    el.dataset.seat = seat;
    el.dataset.place = where;
    el.classList.toggle("receiver", seat === to);
    const named = Boolean(v.game.players?.[seat]);
    const heading = element("h2", nameOf(seat));
    heading.append(element("span", ` · ${named ? `${title(seat)}, ` : ""}${SIDES[where]}`, "pos"));
    const count = element("p", `${v.game.hand_sizes[seat]} tiles`, "count");
    const parts = seatStatus(v, seat);
    if (seat === to) parts.push("receives your pass");
    if (seat === from) parts.push("passes to you");
    const status = element("p", parts.join(" · "), "status");
    el.append(heading, count, status);
    box.append(el);
  }
}

/** Where the Charleston stands, in words: "Pass 3 of 7 · First Charleston: pass Left". */
export function progressText(v) {
  const g = v.game;
  const label = v.step?.label ?? g.steps[0]?.label ?? "";
  switch (g.phase) {
    case "pass":
      return `Pass ${g.pass_number} of ${g.pass_total} · ${label}`;
    case "courtesy":
      return `Pass ${g.pass_number} of ${g.pass_total} · the Courtesy Pass`;
    case "vote":
      return `The vote: go on to the Second Charleston? (${g.passes_resolved} of up to ${g.pass_total} passes played)`;
    case "ding_dong_window":
      return "Ding Dong: East may ask for one, until someone is Ready";
    case "ding_dong":
      return "Ding Dong: one tile to each other player";
    case "done":
      return "The Charleston is over";
    default:
      return g.state_labels.join(" · ") || "The table";
  }
}

export function renderCentre(v) {
  $("progress").textContent = progressText(v);
  const step = v.step;
  const arrow = $("arrow");
  arrow.hidden = !step?.to;
  if (step?.to) arrow.dataset.to = placeOf(v.seat, step.to);
  let turn = "";
  if (step?.to) {
    const n = step.count ?? "0 to 3";
    const where = `${nameOf(step.to)} (${SIDES[placeOf(v.seat, step.to)]})`;
    const waiting = v.game.steps.flatMap((s) => s.awaiting).filter((s) => s !== v.seat).map(nameOf);
    turn = step.confirmed
      ? `You passed to ${where}${waiting.length ? `; waiting for ${joined(waiting)}` : ""}.`
      : `You pass ${n} to ${where}.`;
  } else if (v.game.phase === "vote") {
    const missing = SEATS.filter((s) => !v.game.votes?.[s]).sort((a, b) => (b === v.seat) - (a === v.seat))
      .map((s) => (s === v.seat ? "you" : nameOf(s)));
    turn = missing.length ? `Waiting for ${joined(missing)} to vote.` : "";
  }
  $("turn").textContent = turn;
}

/** The table's talk in one line: votes to stop, the courtesy agreement, East's hand,
 * Ding Dong; and the ending in words once the Charleston is over. */
export function renderPhase(v) {
  const g = v.game;
  const lines = [];
  const stop = Object.entries(g.votes ?? {}).filter(([, c]) => c === "stop").map(([s]) => (s === v.seat ? "you" : nameOf(s)));
  if (stop.length) lines.push(`Voted to stop the Charleston: ${joined(stop)}`);
  if (v.courtesy?.agreed !== null && v.courtesy?.agreed !== undefined) {
    lines.push(`Courtesy agreed: ${v.courtesy.agreed} tile${v.courtesy.agreed === 1 ? "" : "s"}`);
  }
  const d = g.declaration;
  if (d && !g.finished) {
    const whose = d.seat === v.seat ? "Your" : `${fullName(d.seat)}'s`;
    lines.push(d.judged && d.verdict === "invalid" && d.kind === "heavenly"
      ? `${whose} Heavenly Hand was judged invalid and set aside`
      : `${d.seat === v.seat ? "You" : fullName(d.seat)} declared ${aHand(d.kind)} (${d.judged ? `judged ${d.verdict}` : d.verdict})`);
  }
  const dd = g.ding_dong;
  if (dd && (dd.requested > 0 || g.phase.startsWith("ding_dong") || dd.ready || dd.closed)) {
    lines.push(`Ding Dong: ${dd.requested} of ${dd.max} requested${dd.ready ? ` · ${nameOf(dd.ready)} is Ready` : ""}${dd.closed ? " · closed" : ""}`);
  }
  $("phase").textContent = lines.join(" · ");
  const ended = $("ended");
  ended.hidden = !g.finished;
  ended.replaceChildren();
  if (!g.finished) return;
  ended.dataset.how = g.ending?.how ?? "";
  ended.append(element("strong", "The Charleston is over. "), g.ending?.text ?? "");
  const verdict = state.history?.lastVerdict;
  if (verdict?.text && d?.judged) ended.append(element("span", ` The director's reason: “${verdict.text}”`, "reason"));
}
