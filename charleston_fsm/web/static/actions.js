// What the seat can do now: only the commands its view allows, each button saying what
// it does, and a question before anything that cannot be taken back. The buttons follow
// the view's phase (one function per phase); the table page hands in how to send.

import { $, element } from "./dom.js";
import { passOnce, startsWhen } from "./clock.js";
import { focusTile } from "./rack.js";
import { nameOf, state } from "./table_state.js";
import { SEATS, faceName, placeOf, title } from "./tiles.js";

/** What the table page does for the actions (setupActions). */
const io = { send: async () => false, say: () => {}, render: () => {}, placeAll: () => {} };

// -- the question before an irreversible act -------------------------------------------------
let answer = null;

/** Ask in a modal dialog; resolves true only if the player chose `yes`. */
export function ask({ heading, text, yes }) {
  const dialog = $("ask");
  $("ask-title").textContent = heading;
  $("ask-text").textContent = text;
  $("ask-yes").textContent = yes;
  const backKey = document.activeElement?.dataset?.key;
  const back = document.activeElement;
  dialog.showModal();
  $("ask-no").focus(); // the safe choice first
  return new Promise((resolve) => {
    answer = (yes) => {
      answer = null;
      dialog.close();
      // the page may have redrawn its buttons meanwhile: back to the same one by its key
      const again = back?.isConnected ? back : document.querySelector(`#actions [data-key="${backKey}"]`);
      if (again && !again.disabled) again.focus();
      else focusTile("rack", state.cursor);
      resolve(yes);
    };
  });
}

/** Wire the dialog; `send(command, done, then)`, `say(text, kind)`, `render()` and
 * `placeAll()` are the table page's. */
export function setupActions({ send, say, render, placeAll }) {
  Object.assign(io, { send, say, render, placeAll });
  $("ask-yes").addEventListener("click", () => answer?.(true));
  $("ask-no").addEventListener("click", () => answer?.(false));
  $("ask").addEventListener("cancel", (e) => {
    e.preventDefault();
    answer?.(false);
  });
}

async function askThenSend(question, command, done) {
  if (!(await ask(question))) {
    io.say("Nothing was sent.");
    return;
  }
  await io.send(command, done);
}

// -- the buttons ---------------------------------------------------------------------------
function button(key, label, onClick, { disabled = false, cls = "", why = "" } = {}) {
  const b = element("button", label, cls);
  b.type = "button";
  b.dataset.key = key;
  b.disabled = disabled || state.busy;
  if (why && b.disabled) b.setAttribute("aria-describedby", `why-${key}`);
  b.handler = onClick; // a redraw that changes nothing keeps the button and takes its handler
  b.addEventListener("click", (event) => b.handler(event));
  return b;
}

function note(text, cls = "muted", id = "") {
  const p = element("span", text, cls);
  if (id) p.id = id;
  return p;
}

const passCount = () => state.lifted.size + state.blind;

/** Why the pass cannot be confirmed yet, in words; "" when it can. */
function passBlocker(v) {
  const step = v.step;
  if (v.clock?.held) return `The table has not started: lift your tiles now; you pass once ${passOnce(v.clock)}.`;
  if (v.clock?.bot) return "The service's bot plays your seat now.";
  if (v.must_place_first) return "Place the received tiles in your rack before the next pass.";
  const passable = new Set(step.passable);
  for (const id of state.lifted) if (!passable.has(id)) return "One of the lifted tiles cannot be passed.";
  const n = passCount();
  if (step.count !== null) {
    if (n < step.count) return `Lift ${step.count - n} more tile${step.count - n === 1 ? "" : "s"}.`;
    if (n > step.count) return `Lower ${n - step.count} tile${n - step.count === 1 ? "" : "s"}: this pass takes exactly ${step.count}.`;
    return "";
  }
  const [lo, hi] = step.count_range ?? [0, 3];
  if (n < lo) return `Lift at least ${lo}.`;
  if (n > hi) return `Lower ${n - hi}: at most ${hi} tiles.`;
  return "";
}

function sameAsSelection(v) {
  const sel = v.selection;
  if (!sel) return false;
  const ids = sel.tiles.map((t) => t.id);
  return sel.blind === state.blind && ids.length === state.lifted.size && ids.every((id) => state.lifted.has(id));
}

// -- one function per phase ------------------------------------------------------------------
const BY_PHASE = {
  pass: passActions,
  courtesy: courtesyActions,
  vote: voteActions,
  ding_dong_window: dingDongWindowActions,
  ding_dong: (v, row, can) => renderDingDong(v, row, can),
  done: doneActions,
};

export function renderActions(v) {
  const shown = $("actions");
  const box = document.createElement("div");
  const can = new Set(v.allowed_commands);
  const row = (...children) => {
    const div = element("div", "", "row");
    div.append(...children);
    box.append(div);
    return div;
  };
  // placing first is what the table waits for when the rules ask it before the next pass:
  // then "Place all" leads (a phone showed it under the disabled pass, below the screen)
  const placeRow = () => row(
    button("place-all", "Place all", io.placeAll, { disabled: !can.has("place_tiles"), cls: v.must_place_first ? "primary" : "" }),
    note("or place them one at a time."),
  );
  if (v.must_place_first) placeRow(); // (only with received tiles)
  BY_PHASE[v.game.phase]?.(v, row, can);
  if (v.received.length && !v.must_place_first) placeRow();
  if (!box.children.length && !v.game.finished) {
    const waiting = v.clock?.held ? `Waiting for the table to start: ${startsWhen(v.clock)}.`
      : v.clock?.bot ? "The service's bot plays your seat." : "Waiting for the others…";
    row(note(waiting));
  }
  if (keepIfSame(shown, box)) return;
  const focusedKey = shown.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  shown.replaceChildren(...box.childNodes);
  if (focusedKey) {
    const again = shown.querySelector(`[data-key="${focusedKey}"]`);
    if (again && !again.disabled) again.focus();
    else settleFocus(shown);
  }
}

/** Whether the drawn actions already read as `fresh` (the same markup, no form field): they
 * stay, their buttons given the fresh handlers. Every stream event redraws the table, and a
 * button rebuilt under a person's finger, pointer or screen reader loses the press or the
 * focus: on a slow phone the bots' events came faster than a tap could land. */
function keepIfSame(shown, fresh) {
  if (shown.innerHTML !== fresh.innerHTML || fresh.querySelector("select, input, textarea")) return false;
  const old = shown.querySelectorAll("button");
  fresh.querySelectorAll("button").forEach((b, i) => { old[i].handler = b.handler; });
  return true;
}

/** Focus lost with its button: the first thing to do next, else the rack. */
function settleFocus(box) {
  const next = box.querySelector("button.primary:not(:disabled), button:not(:disabled)");
  if (next) next.focus();
  else focusTile("rack", state.cursor);
}

function passActions(v, row, can) {
  if (v.step?.direction) passRows(v, row, can);
  else if (v.step || can.has("give_ding_dong")) renderDingDong(v, row, can);
  if (can.has("vote")) lateObjection(row); // a stop still taken in this pass (nmjl)
  if (can.has("declare_mah_jongg")) declareButton(v, row, "Heavenly");
}

function courtesyActions(v, row, can) {
  if (can.has("offer_courtesy")) {
    const other = v.courtesy.pair.find((s) => s !== v.seat);
    row(note(`Courtesy Pass with ${nameOf(other)}: how many tiles do you offer?`), ...[0, 1, 2, 3].map((n) =>
      button(`offer-${n}`, `Offer ${n}`, () => io.send({ type: "offer_courtesy", count: n }, `You offered ${n}.`))));
  } else if (v.step?.direction) {
    passRows(v, row, can);
  } else if (v.courtesy?.agreed === 0) {
    row(note("Your pair exchanges no tile: the Courtesy Pass is done for you."));
  }
}

function voteActions(v, row, can) {
  const mine = v.game.votes?.[v.seat];
  row(
    note(mine ? `You voted ${mine === "stop" ? "to stop" : "to continue"}.` : "Go on to the Second Charleston? One stop ends the Charleston for everyone."),
    button("continue", "Continue", () => io.send({ type: "vote", choice: "continue" }, "You voted to continue."), { disabled: !can.has("vote") }),
    button("stop", "Stop the Charleston", () => askThenSend(
      {
        heading: "Vote to stop the Charleston?",
        text: "One vote to stop ends the Charleston for all four players: there is no Second Charleston. Your vote cannot be changed.",
        yes: "Vote to stop",
      },
      { type: "vote", choice: "stop" },
      "You voted to stop.",
    ), { disabled: !can.has("vote"), cls: "danger" }),
  );
}

function dingDongWindowActions(v, row, can) {
  if (can.has("request_ding_dong")) {
    row(button("request", "Request a Ding Dong", () => askThenSend(
      {
        heading: "Request a Ding Dong?",
        text: "Every player then gives one tile to each other player. It cannot be taken back.",
        yes: "Request it",
      },
      { type: "request_ding_dong" },
      "Ding Dong requested.",
    )));
  }
  if (can.has("declare_ready")) {
    row(button("ready", "Declare Ready", () => askThenSend(
      {
        heading: "Declare Ready?",
        text: "After a Ready, no more Ding Dong can be requested in this deal. It cannot be taken back.",
        yes: "Declare Ready",
      },
      { type: "declare_ready" },
      "You declared Ready.",
    )));
  }
}

function doneActions(v, row, can) {
  if (can.has("declare_mah_jongg")) declareButton(v, row, "Earthly");
  if (can.has("challenge_dead_hand")) {
    const pick = document.createElement("select");
    pick.setAttribute("aria-label", "Whose hand");
    for (const s of SEATS) if (s !== v.seat) pick.append(new Option(nameOf(s), s));
    row(pick, button("challenge", "Challenge a dead hand", () => askThenSend(
      {
        heading: `Challenge ${nameOf(pick.value)}'s hand as dead?`,
        text: "The challenge is recorded for the director to rule on. It cannot be taken back.",
        yes: "Challenge",
      },
      { type: "challenge_dead_hand", target: pick.value },
      "Challenge recorded.",
    )));
  }
}

// -- what several phases share ---------------------------------------------------------------
function passRows(v, row, can) {
  const step = v.step;
  const n = passCount();
  const to = `${nameOf(step.to)} (${title(placeOf(v.seat, step.to))})`;
  const need = step.count !== null ? `${step.count}` : `${step.count_range[0]}-${step.count_range[1]}`;
  row(note(`${step.label}: give ${need} to ${nameOf(step.to)}; ${state.lifted.size} lifted${state.blind ? `, ${state.blind} unseen` : ""}.`));
  if (step.blind_allowed && step.blind_max > 0) {
    const minus = button("blind-minus", "−", () => { state.blind = Math.max(0, state.blind - 1); io.render(); }, { disabled: state.blind === 0 });
    const plus = button("blind-plus", "+", () => { state.blind = Math.min(step.blind_max, state.blind + 1); io.render(); }, { disabled: state.blind >= step.blind_max });
    minus.setAttribute("aria-label", "One fewer unseen");
    plus.setAttribute("aria-label", "One more unseen");
    row(note(`Forward unseen (blind pass): ${state.blind} of up to ${step.blind_max}`, "", "blind-count"), minus, plus);
  }
  const body = { tiles: [...state.lifted], blind: state.blind };
  const blocker = passBlocker(v);
  const shownCount = step.count ?? n; // a fixed pass names its count; a free one, the lift
  const label = shownCount === 0 ? `Pass no tiles ${title(step.direction)}` : `Pass ${shownCount} ${title(step.direction)}`;
  if (!step.confirmed) {
    const pass = button("pass", label, () => io.send({ type: "confirm_pass", ...body }, `Passed ${n} to ${to}; waiting for the others.`), {
      disabled: !can.has("confirm_pass") || Boolean(blocker),
      cls: "primary pass",
      why: blocker,
    });
    row(pass, blocker ? note(blocker, "why", "why-pass") : note(`Sends ${n} to ${to}.`));
  } else {
    row(
      note("Locked in: change or withdraw until the pass resolves.", "locked-note"),
      button("change", `Change (${shownCount})`, () => io.send({ type: "change_pass", ...body }, "Changed."), {
        disabled: !can.has("change_pass") || Boolean(blocker) || sameAsSelection(v),
      }),
      button("withdraw", "Withdraw", () => io.send({ type: "withdraw_pass" }, "Withdrawn."), { disabled: !can.has("withdraw_pass") }),
    );
  }
}

function lateObjection(row) {
  row(
    note("Late objection: you may still stop the Charleston until this pass resolves."),
    button("late", "Stop the Charleston (late objection)", () => askThenSend(
      {
        heading: "Object late and stop the Charleston?",
        text: "This stops the Charleston for all four players now. Every confirmed choice of this pass is dropped and no tile moves. It cannot be taken back.",
        yes: "Stop the Charleston",
      },
      { type: "vote", choice: "stop" },
      "You objected: the Charleston stops.",
    ), { cls: "danger" }),
  );
}

function declareButton(v, row, kind) {
  row(button("declare", `Declare Mah Jongg (${kind} hand)`, () => askThenSend(
    {
      heading: `Declare Mah Jongg (${kind} hand)?`,
      text: `This ends the Charleston for all four players now and claims that your ${v.rack.length + v.received.length} tiles already make a winning hand. The director judges the hand. It cannot be taken back.`,
      yes: "Declare Mah Jongg",
    },
    { type: "declare_mah_jongg" },
    "Declared.",
  )));
}

function renderDingDong(v, row, can) {
  const others = SEATS.filter((s) => s !== v.seat);
  const lifted = [...state.lifted];
  for (const id of lifted) {
    if (!state.gifts.has(id)) {
      const used = new Set(state.gifts.values());
      state.gifts.set(id, others.find((s) => !used.has(s)) ?? others[0]);
    }
  }
  row(note(`Ding Dong: one tile to each other player (${lifted.length} of 3 lifted).`));
  const byId = new Map(v.rack.map((t) => [t.id, t]));
  for (const id of lifted) {
    const pick = document.createElement("select");
    const name = faceName(byId.get(id)?.face ?? "");
    pick.setAttribute("aria-label", `Receiver of ${name}`);
    for (const s of others) pick.append(new Option(nameOf(s), s, false, state.gifts.get(id) === s));
    pick.addEventListener("change", () => { state.gifts.set(id, pick.value); io.render(); });
    row(note(`${name} →`, ""), pick);
  }
  const receivers = lifted.map((id) => state.gifts.get(id));
  let why = "";
  if (!can.has("give_ding_dong")) {
    why = v.must_place_first ? "Place your received tiles first." : v.selection ? "Your gifts are given; waiting for the others." : "Not your turn to give.";
  } else if (lifted.length !== 3) why = `Lift ${3 - lifted.length > 0 ? `${3 - lifted.length} more` : `${lifted.length - 3} fewer`}: one tile for each player.`;
  else if (new Set(receivers).size !== 3) why = "Choose a different player for each tile.";
  row(
    button("give", "Give Ding Dong", () => io.send({
      type: "give_ding_dong",
      gifts: lifted.map((tid) => ({ tile: tid, to: state.gifts.get(tid) })),
    }, "Given."), { disabled: Boolean(why), cls: "primary", why }),
    why ? note(why, "why", "why-give") : note("Sends each tile to its player."),
  );
}
