// The desk's controls of a table run as part of a round: start a held table, add time
// to a seat's deadline, hand a seat to the service's bot and back, give a seat to a
// substitute with a new link (shown once), answer the seats' calls, and issue or revoke
// the table's spectator link. Every act is a director command or route of the API, and a
// row of the game's record; what the desk shows comes from the director's view.

import { $, element } from "./dom.js";
import { SEATS } from "./tiles.js";
import { clockTime, confirmAct, duration } from "./console.js";

/** What the desk hands in: its Api, `direct(command, done)`, `say`, `fail`, `seatName`,
 * `refresh`. */
const io = {};

/** The gate, the calls and the seats' players, from the director's view. */
export function renderRoundTools(view) {
  const clock = view.clock;
  const g = view.game;
  $("gate-state").textContent = clock?.held ? heldText(clock)
    : clock?.started_at ? `Started at ${clockTime(clock.started_at)}.` : "";
  $("start-table").hidden = !clock?.held;
  const timed = Boolean(clock?.options) && !g.finished;
  $("extend-form").hidden = !timed;
  renderCalls(clock?.calls || {});
  renderSeatsInHand(clock, g.finished);
}

/** A held table's gate in words: its start time, the players it still waits for, or you. */
function heldText(clock) {
  if (clock.start_at) return `Held: the table starts at ${clockTime(clock.start_at)}, or when you start it.`;
  if (clock.awaiting) {
    const missing = clock.awaiting.map((s) => io.seatName(s)).join(", ");
    return `Held: the table starts once every player has opened their link (still missing: ${missing || "nobody"}), or when you start it.`;
  }
  return "Held: no clock runs and no seat passes until you start the table.";
}

const callText = (seat, call) => {
  const waited = (Date.now() - new Date(call.at).getTime()) / 1000;
  return `${io.seatName(seat)} called at ${clockTime(call.at)} (waiting ${duration(waited)})${call.reason ? `: “${call.reason}”` : "."}`;
};

/** The open calls, oldest first; redrawn only when they change (a focused button stays),
 * their waiting times every time. */
function renderCalls(calls) {
  const list = $("calls");
  const open = Object.entries(calls).sort(([, a], [, b]) => a.at.localeCompare(b.at));
  $("calls-none").hidden = open.length > 0;
  const key = JSON.stringify(open);
  if (list.dataset.key === key) {
    for (const [seat, call] of open) list.querySelector(`li[data-seat="${seat}"] p`).textContent = callText(seat, call);
    return;
  }
  list.dataset.key = key;
  list.replaceChildren(...open.map(([seat, call]) => {
    const li = element("li", "", "call-item");
    li.dataset.seat = seat;
    li.append(element("p", callText(seat, call)));
    const cleared = element("button", "All clear");
    cleared.type = "button";
    cleared.setAttribute("aria-label", `Answer ${io.seatName(seat)}'s call: all clear`);
    cleared.addEventListener("click", () => io.direct(
      { type: "answer_call", seat, answer: "cleared" }, `${io.seatName(seat)}'s call is answered: all clear.`));
    const ruling = element("button", "Answer with the ruling above");
    ruling.type = "button";
    ruling.setAttribute("aria-label", `Answer ${io.seatName(seat)}'s call with the ruling written above`);
    ruling.addEventListener("click", () => answerWithRuling(seat));
    const row = element("div", "", "row");
    row.append(cleared, ruling);
    li.append(row);
    return li;
  }));
}

async function answerWithRuling(seat) {
  const text = $("ruling-text").value.trim();
  if (!text) return io.say("Write the ruling above first (its kind and text): the answer records it.", "error");
  const kind = $("ruling-kind").value;
  if (!(await confirmAct(`Answer ${io.seatName(seat)}'s call with this ${kind}? It is recorded and cannot be removed.`, "Record the answer"))) return;
  if (await io.direct({ type: "answer_call", seat, answer: "ruling", kind, text }, `${io.seatName(seat)}'s call is answered with a ${kind}.`)) {
    $("ruling-text").value = "";
  }
}

function renderSeatsInHand(clock, finished) {
  const bots = new Set(clock?.bots || []);
  const list = $("seat-players");
  const key = JSON.stringify([[...bots], clock?.seated, finished, SEATS.map(io.seatName)]);
  if (list.dataset.key === key) return; // a focused button stays
  list.dataset.key = key;
  list.replaceChildren(...SEATS.map((seat) => {
    const li = element("li", "", "row");
    const who = bots.has(seat) ? "the service's bot" : clock?.seated?.[seat] || "its player";
    li.append(element("span", `${io.seatName(seat)}: played by ${who}.`));
    if (!finished) {
      const b = element("button", bots.has(seat) ? "Hand back to a person" : "Hand to the bot");
      b.type = "button";
      b.setAttribute("aria-label", `${b.textContent}: ${io.seatName(seat)}`);
      b.addEventListener("click", () => handOver(seat, bots.has(seat)));
      li.append(b);
    }
    return li;
  }));
}

async function handOver(seat, back) {
  if (back) {
    await io.direct({ type: "hand_back", seat }, `${io.seatName(seat)} is played by its player again.`);
    return;
  }
  if (!(await confirmAct(`Hand ${io.seatName(seat)} to the service's bot? It plays the seat from its own view until you hand it back; the seat's own commands are refused meanwhile.`, "Hand it to the bot"))) return;
  await io.direct({ type: "hand_to_bot", seat }, `The service's bot plays ${io.seatName(seat)} now.`);
}

/** A secret shown once: the link, and a button that copies it. */
function showOnce(box, text, link) {
  box.hidden = false;
  box.replaceChildren(element("p", text));
  const url = `${location.origin}${link}`;
  const code = element("code", url);
  const copy = element("button", "Copy the link");
  copy.type = "button";
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(url);
      io.say("The link is copied.");
    } catch (_) {
      io.say("Copy the link by hand: select it and copy.");
    }
  });
  box.append(code, copy);
}

export function wireRoundTools(desk) {
  Object.assign(io, desk);
  $("start-table").addEventListener("click", async () => {
    if (!(await confirmAct("Start the table now? The clock runs from now and seats may pass.", "Start it"))) return;
    await io.direct({ type: "start_game" }, "The table has started: the clock runs from now.");
  });
  $("extend-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const seconds = Number($("extend-seconds").value);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) return io.say("Give whole seconds, 1 to 3600.", "error");
    const command = { type: "extend_time", seconds };
    const seat = $("extend-seat").value;
    if (seat) command.seat = seat;
    const reason = $("extend-reason").value.trim();
    if (reason) command.reason = reason;
    const who = seat ? io.seatName(seat) : "every seat still deciding";
    if (await io.direct(command, `${duration(seconds)} added for ${who}.`)) $("extend-reason").value = "";
  });
  $("substitute-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const seat = $("substitute-seat").value;
    const label = $("substitute-label").value.trim();
    const name = $("substitute-name").value.trim();
    const playerId = $("substitute-player-id").value.trim();
    const body = { deadline: $("substitute-deadline").value };
    if (label) body.label = label;
    if (name) body.name = name;
    if (playerId) body.player_id = playerId;
    const before = io.seatName(seat);
    const taker = name || "the substitute";
    if (!(await confirmAct(`Give ${before} a new link for ${taker}? The seat's old link stops working at once, everywhere, and the seat is ${name ? `called ${name}` : "called by its wind"} from now on.`, "Give a new link"))) return;
    try {
      const answer = await io.api.command(body, `/seats/${seat}/token`);
      showOnce($("substitute-link"), `${before}'s new link, shown once: hand it to ${name || label || "the substitute"}.`, answer.link);
      for (const id of ["substitute-label", "substitute-name", "substitute-player-id"]) $(id).value = "";
      io.say(`${io.seatName(seat)} has a new link; the old one opens nothing now.`);
      await io.refresh();
    } catch (error) {
      io.fail(error);
    }
  });
  $("spectator-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const live = $("spectator-live").checked;
    const typed = $("spectator-delay").value.trim();
    const delay = Number(typed);
    if (typed && (!Number.isInteger(delay) || delay < 0 || delay > 3600)) return io.say("Give the delay in whole seconds, 0 to 3600, or leave it empty for the round's.", "error");
    if (live && typed && delay) return io.say("A live link has no delay: empty the seconds, or untick live.", "error");
    const what = live ? "a live spectator link (the table as it happens, the round's delay set aside)" : "a new spectator link";
    if (!(await confirmAct(`Issue ${what}? The table's old spectator link stops working.`, "Issue it"))) return;
    try {
      const body = live ? { live: true } : typed ? { delay } : {};
      const answer = await io.api.command(body, "/spectator");
      showOnce($("spectator-link"), `The spectator link (${answer.live ? "live" : `${duration(answer.delay)} behind`}), shown once:`, answer.link);
      await io.refresh();
    } catch (error) {
      io.fail(error);
    }
  });
  $("spectator-revoke").addEventListener("click", async () => {
    if (!(await confirmAct("Revoke the table's spectator link? Whoever watches with it sees nothing more.", "Revoke it"))) return;
    try {
      await io.api.request("/spectator", { method: "DELETE" });
      $("spectator-link").hidden = true;
      io.say("The spectator link is revoked.");
      await io.refresh();
    } catch (error) {
      io.fail(error);
    }
  });
}

/** Spoken names of the seats for the desk's selects. */
export function nameSeats() {
  for (const id of ["extend-seat", "substitute-seat"]) {
    for (const option of $(id).options) if (option.value) option.textContent = io.seatName(option.value);
  }
}
