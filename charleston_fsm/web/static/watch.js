// A spectator's page: a table as someone standing behind it sees it (the four seats, how
// many tiles each holds, who is ready, the votes, each pass as a count and a direction, the
// clock, the rulings, the end), or a round's tables. Everything comes from the spectator
// routes (GET …/spectate, …/spectate/events, …/spectate/stream), which never carry a tile
// and apply the link's delay on the server: this page shows what it is sent, no more.

import { Api, ApiError, tokenFor } from "./api.js";
import { $, element, joined } from "./dom.js";
import { SEATS, aHand, title } from "./tiles.js";
import { clockTime, dueText, duration, plainError, unreachable } from "./console.js";

const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
const roundMode = parts[1] === "round";
const subject = parts.at(-1) || "";
const token = tokenFor(subject);
const state = { answer: null, events: [], last: 0, stop: null, timer: null, retry: null, rules: null, reading: false, again: false };

function say(text, kind = "info") {
  $("message").textContent = text;
  $("message").dataset.kind = kind;
}

const name = (seat) => state.answer?.players?.[seat] || title(seat);
const fullName = (seat) => (state.answer?.players?.[seat] ? `${state.answer.players[seat]} (${title(seat)})` : title(seat));
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** One row of the record in words for a spectator: counts and directions, never a tile. */
export function sentence(e) {
  const p = e.payload || {};
  const who = e.seat ? fullName(e.seat) : "";
  switch (e.type) {
    case "game_created": return "The tiles were dealt.";
    case "game_started": return p.scheduled ? "The table started at its start time." : p.seated ? "Every player had opened their link: the table started." : "The director started the table.";
    case "pass_confirmed": return `${who} is ready to pass ${plural(p.count, "tile")}${p.blind ? `, ${p.blind} of them unseen` : ""}.`;
    case "pass_changed": return `${who} changed the choice (${plural(p.count, "tile")}).`;
    case "pass_withdrawn": return `${who} took the choice back.`;
    case "tiles_transferred": return `${who} passed ${plural(p.count, "tile")} ${p.direction ? `${p.direction} ` : ""}to ${fullName(p.receiver)}${p.blind_count ? ` (${p.blind_count} forwarded unseen)` : ""}.`;
    case "pass_resolved": return `${p.label || "The pass"} is done${p.moved ? "" : ": nothing moved"}.`;
    case "tiles_placed": return `${who} placed ${plural(p.count, "received tile")} in the rack.`;
    case "vote_cast": return p.late ? `${who} objected late: the Charleston stops.` : `${who} voted to ${p.choice === "stop" ? "stop" : "continue"}.`;
    case "courtesy_offered": return `${who} offered ${plural(p.count, "courtesy tile")}.`;
    case "courtesy_agreed": return `${joined((p.pair || []).map(fullName))} agreed on ${plural(p.count, "courtesy tile")}.`;
    case "ding_dong_requested": return `${who} asked for Ding Dong number ${p.number}.`;
    case "ding_dong_given": return `${who} gave one tile to each other player.`;
    case "ready_declared": return `${who} declared Ready: no more Ding Dong.`;
    case "ding_dong_closed": return "The director closed the Ding Dong window.";
    case "mah_jongg_declared": return `${who} declared Mah Jongg: ${aHand(p.kind)}.`;
    case "declaration_judged": return `The director judged the ${title(p.kind)} Hand ${p.verdict}.`;
    case "charleston_ended": return endedWords(e);
    case "ruling_recorded": return `The director recorded a ${p.kind}${e.seat ? ` about ${who}` : ""}: “${p.text}”.`;
    case "clock_expired": return `${who}'s time ran out: the clock ${p.done} for them.`;
    case "seat_late": return `${who}'s time ran out: flagged late.`;
    case "clock_paused": return p.round ? "The director paused the whole round." : "The director paused the clock.";
    case "clock_resumed": return p.round ? "The director resumed the whole round." : "The director resumed the clock.";
    case "time_extended": return `The director added ${plural(p.seconds, "second")} for ${who || "every awaited seat"}.`;
    case "seat_taken": return p.by === "bot" ? `The service's bot plays ${title(e.seat)} now.` : `${p.name || (p.token_replaced ? "A substitute" : p.label) || "A player"} plays ${title(e.seat)} now.`;
    case "director_called": return `${who} called the director.`;
    case "call_answered": return `The director answered ${who}'s call${p.answer === "cleared" ? ": all clear" : " with a ruling"}.`;
    case "spectator_link": return "";
    default: return "";
  }
}

/** The end in words: the last end of a finished table says how it ended (the view's
 * ending, with the players' names); an earlier one (a Heavenly Hand set aside after it)
 * keeps the record's reason. The record's reason alone said "all passes complete" for a
 * Charleston stopped by a vote. */
function endedWords(e) {
  const g = state.answer?.view?.game;
  const last = state.events.findLast((x) => x.type === "charleston_ended");
  if (g?.finished && g.ending?.text && last?.seq === e.seq) return `The Charleston is over. ${g.ending.text}`;
  return `The Charleston is over: ${e.payload?.reason ?? "complete"}.`;
}

function progress(g) {
  const label = g.steps?.[0]?.label ?? "";
  if (g.finished) return "The Charleston is over";
  if (g.phase === "pass" || g.phase === "courtesy") return `Pass ${g.pass_number} of ${g.pass_total} · ${label}`;
  if (g.phase === "vote") return "The vote: go on to the Second Charleston?";
  return label || g.state_labels?.join(" · ") || "The table";
}

function seatLine(v, seat) {
  const g = v.game;
  const c = v.clock;
  const bits = [`${g.hand_sizes[seat]} tiles`];
  for (const step of g.steps) {
    if (step.participants.includes(seat)) bits.push(step.confirmed.includes(seat) ? "ready" : "choosing…");
  }
  const vote = g.votes?.[seat];
  if (vote) bits.push(vote === "stop" ? "voted to stop" : "voted to continue");
  if (v.bots.includes(seat)) bits.push("played by the bot");
  if (c?.late?.includes(seat)) bits.push("late");
  if (c?.called?.includes(seat)) bits.push("called the director");
  const deadline = c?.deadlines?.[seat];
  if (deadline && deadline.kind !== "bot" && !c.held) {
    bits.push(c.paused ? "clock paused" : dueText(deadline.due_at));
    if (deadline.extended) bits.push(`${duration(deadline.extended.seconds)} added`);
  }
  return bits.join(" · ");
}

function renderTable() {
  const answer = state.answer;
  const v = answer.view;
  const g = v.game;
  $("table-card").hidden = false;
  $("history-card").hidden = false;
  $("progress").textContent = progress(g);
  document.title = `Charleston · watching · ${progress(g)}`;
  $("where").textContent = `${state.rules ?? g.ruleset} · players: ${joined(SEATS.map(fullName))}`;
  $("as-of").dataset.seq = v.as_of.seq; // the row shown last: a test compares it with the record
  $("as-of").textContent = answer.delay
    ? `Shown ${duration(answer.delay)} behind the table: as it was at ${clockTime(v.as_of.at)}.`
    : "Live: the table as it happens.";
  const gate = $("gate");
  const c = v.clock;
  gate.hidden = !(c?.held || c?.paused);
  gate.textContent = c?.held
    ? (c.start_at ? `Not started yet: the table starts at ${clockTime(c.start_at)}.` : "Not started yet: the director starts the table.")
    : c?.paused ? "The director has paused the clock." : "";
  const list = $("seats");
  list.replaceChildren();
  for (const seat of SEATS) {
    const li = element("li", "", "card watch-seat");
    li.dataset.seat = seat;
    li.append(element("h3", fullName(seat)), element("p", seatLine(v, seat)));
    list.append(li);
  }
  const ended = $("ended");
  ended.hidden = !g.finished;
  const why = g.ending?.text ?? `${title(g.ended_reason ?? "complete")}.`;
  ended.textContent = g.finished ? `The Charleston is over. ${why}` : "";
}

function renderHistory() {
  const list = $("history");
  const lines = state.events.map((e) => [e, sentence(e)]).filter(([, text]) => text);
  // every line's words in the key: the end's words follow the view, which can arrive a read
  // after the end's row (the view is read before the rows), with other rows after it
  const key = lines.map(([e, text]) => `${e.seq}:${text}`).join("\n");
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.replaceChildren(...lines.reverse().map(([e, text]) => {
    const li = element("li", text);
    li.value = e.seq;
    li.dataset.kind = e.type;
    li.append(element("span", ` ${clockTime(e.created_at)}`, "s-detail"));
    return li;
  }));
}

/** The ruleset's title for people ("National Mah Jongg League"), once. */
async function loadRules(name) {
  state.rules = name;
  const response = await fetch(`/v1/rulesets/${encodeURIComponent(name)}`);
  if (response.ok) state.rules = (await response.json()).title ?? name;
}

/** One read at a time: a stream event while a read is under way (a slow answer on a busy
 * link) asks for one more read after it, so the history never holds a row twice and an
 * older view never lands on a newer one. */
async function refresh(api) {
  if (state.reading) {
    state.again = true;
    return;
  }
  state.reading = true;
  try {
    await readTable(api);
  } finally {
    state.reading = false;
  }
  if (state.again) {
    state.again = false;
    refresh(api);
  }
}

async function readTable(api) {
  clearTimeout(state.retry);
  try {
    // the rows first, then the view: the view is never older than the rows shown with it
    // (a table that ends between the two reads shows its end's words at once)
    const listing = await api.get(`/spectate/events?after=${state.last}`);
    state.answer = await api.get("/spectate");
    if (!state.rules) loadRules(state.answer.view.game.ruleset);
    state.events.push(...listing.events);
    state.last = listing.last_seq;
    say("");
    renderTable();
    renderHistory();
  } catch (error) {
    if (error instanceof ApiError && error.problem?.code === "behind_delay") {
      const wait = Number(error.problem.detail.match(/in (\d+) s/)?.[1] || 5);
      say(`This link shows the table behind a delay: it appears in ${duration(wait)}.`);
      state.retry = setTimeout(() => refresh(api), wait * 1000);
      return;
    }
    say(plainError(error, "table"), "error");
    if (!unreachable(error) && error.status < 500) document.body.classList.add("broken");
  }
}

function watchTable() {
  const api = new Api(subject, token);
  refresh(api);
  const live = (status, error) => {
    $("live").textContent = status === "live" ? "● following" : status === "closed" ? "○ stopped" : "○ reconnecting…";
    if (status === "closed" && error?.status === 401) {
      say("This spectator link was revoked: it shows nothing any more. Ask the director for a new one.", "error");
      document.body.classList.add("broken");
    }
  };
  state.stop = api.follow((message) => {
    if (message.event === "subscribed") return;
    clearTimeout(state.timer);
    state.timer = setTimeout(() => refresh(api), 150);
  }, live, 0, "/spectate/stream");
  setInterval(() => state.answer && renderTable(), 1000);
}

/** Where one table of the round stood behind the link's delay: its step in words (as the
 * table's own page says it), or how it ended, and the moment shown. */
function tableWhere(t, delay) {
  const where = element("p", "", "where");
  if (!t.as_of) {
    where.textContent = t.shown_from ? `Shown from ${clockTime(t.shown_from)}, once the delay has passed.` : "Nothing of this table is shown.";
    return where;
  }
  where.dataset.seq = t.as_of.seq;
  const g = { ...t, steps: t.step ? [{ label: t.step }] : [] };
  const words = t.finished ? `The Charleston is over.${t.ending ? ` ${t.ending}` : ""}` : progress(g);
  where.textContent = delay ? `${words} (as it was at ${clockTime(t.as_of.at)})` : words;
  return where;
}

async function watchRound() {
  $("title").textContent = "Watching a round";
  $("round-card").hidden = false;
  try {
    const response = await fetch(`/v1/rounds/${encodeURIComponent(subject)}/spectate`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const answer = await response.json();
    if (!response.ok) throw new ApiError(response.status, answer);
    $("where").textContent = answer.name ? `Round: ${answer.name}` : "A round";
    $("as-of").textContent = answer.delay ? `Every table is shown ${duration(answer.delay)} behind.` : "Live: every table as it happens.";
    const list = $("round-tables");
    list.replaceChildren();
    for (const t of answer.tables) {
      const li = element("li", "", "card");
      li.dataset.table = t.table;
      const name = t.label && t.label !== `Table ${t.table}` ? `Table ${t.table} · ${t.label}` : `Table ${t.table}`;
      const link = element("a", name);
      link.href = `/watch/${encodeURIComponent(t.game_id)}#token=${encodeURIComponent(token)}`;
      const players = SEATS.filter((s) => t.players?.[s]).map((s) => `${t.players[s]} (${title(s)})`);
      li.append(link);
      if (players.length) li.append(element("p", players.join(", "), "muted"));
      li.append(tableWhere(t, answer.delay));
      list.append(li);
    }
    say("");
  } catch (error) {
    say(plainError(error, "round"), "error");
    if (!unreachable(error) && error.status < 500) return;
  }
  setTimeout(watchRound, 5000);
}

if (!token) {
  document.body.classList.add("broken");
  say("This page needs a spectator's link, the one that ends in #token=…. Ask the director for it.", "error");
} else if (roundMode) {
  watchRound();
} else {
  watchTable();
}
