// The front door: create a game (POST /v1/games) with names, bots, a seed and a clock,
// list the seat and desk links, and remember them in this browser (localStorage).

import { ApiError, plainError } from "./api.js";
import { SEATS, title } from "./tiles.js";

const $ = (id) => document.getElementById(id);
let rulesets = [];
const STORE = "charleston-games";
let shownNow = null; // the game listed under "Your game", not listed twice

// Options in words: a label, and what each choice means at the table.
const WORDS = {
  second_charleston_order: ["Second Charleston order", {
    "left-across-right": "Left, then Across, then Right",
    "across-left-right": "Across, then Left, then Right",
  }],
  blind_pass: ["Blind pass: the last pass of each Charleston may forward arriving tiles unseen"],
  late_objection: ["Late objection: a player may still stop the Charleston until the Second Charleston's first pass resolves"],
  courtesy_mode: ["Courtesy pass", {
    agreed_min: "each pair exchanges the smaller offer",
    asymmetric: "each player gives what they chose, 0 to 3",
  }],
  require_placing: ["Received tiles must be placed in the rack before the next pass"],
  round: ["Round (prevailing wind)", { east: "East", south: "South", west: "West", north: "North" }],
  charleston: ["The six exchanges", { every_round: "every round", last_round: "only in the last round", off: "not played" }],
  ding_dong: ["Ding Dong", { every_round: "every round", last_round: "only in the last round", off: "not played" }],
  ding_dong_max: ["Most Ding Dongs in one deal"],
};

function optionField(name, info) {
  const [label, choices = {}] = WORDS[name] ?? [name.replaceAll("_", " ")];
  const div = document.createElement("div");
  div.className = "field";
  const id = `option-${name}`;
  let input;
  if (info.choices) {
    input = document.createElement("select");
    for (const c of info.choices) input.append(new Option(choices[c] ?? String(c), String(c), false, c === info.default));
  } else if (info.type === "boolean") {
    input = document.createElement("input");
    input.type = "checkbox";
    input.checked = Boolean(info.default);
  } else {
    input = document.createElement("input");
    input.type = info.type === "integer" ? "number" : "text";
    input.value = info.default ?? "";
  }
  input.id = id;
  input.name = name;
  const l = document.createElement("label");
  l.htmlFor = id;
  l.textContent = label;
  if (info.type === "boolean") {
    div.className = "field inline";
    div.append(input, l);
  } else div.append(l, input);
  return div;
}

function showRuleset() {
  const r = rulesets.find((x) => x.name === $("ruleset").value);
  $("ruleset-about").textContent = r.description;
  const box = $("options");
  box.replaceChildren(box.querySelector("legend"));
  for (const [name, info] of Object.entries(r.options)) box.append(optionField(name, info));
}

function chosenOptions() {
  const r = rulesets.find((x) => x.name === $("ruleset").value);
  const options = {};
  for (const [name, info] of Object.entries(r.options)) {
    const input = $("options").querySelector(`[name="${name}"]`);
    let value = input.type === "checkbox" ? input.checked : input.value;
    if (info.type === "integer") value = Number(value);
    if (value !== info.default) options[name] = value;
  }
  return options;
}

function chosenClock() {
  const fields = { confirm_pass: "clock-pass", vote: "clock-vote", courtesy: "clock-courtesy", place_tiles: "clock-place" };
  const clock = {};
  for (const [kind, id] of Object.entries(fields)) if ($(id).value) clock[kind] = Number($(id).value);
  if (!Object.keys(clock).length) return null;
  return { ...clock, on_expiry: $("clock-expiry").value };
}

const START_WORDS = {
  all_present: "It starts by itself once every player has opened their link (a seat a bot plays needs none); until then they see their racks.",
  held: "It is held: start it from the director's desk (\"Start the table\") when everyone is ready; until then the players see their racks.",
  now: "It has started: the clock (if any) and the bots run from now.",
};

function say(text, kind = "error") {
  $("message").textContent = text;
  $("message").dataset.kind = kind;
}

async function create(event) {
  event.preventDefault();
  say("", "info");
  const headers = { "Content-Type": "application/json" };
  const key = $("platform-key").value.trim();
  if (key) headers.Authorization = `Bearer ${key}`;
  const players = {};
  for (const seat of SEATS) {
    const name = $(`name-${seat}`).value.trim();
    if (name) players[seat] = name;
  }
  const bots = SEATS.filter((s) => $(`bot-${s}`).checked);
  const request = { ruleset: $("ruleset").value, options: chosenOptions(), bots };
  if (Object.keys(players).length) request.players = players;
  const seed = $("seed").value.trim();
  if (seed !== "" && !/^[0-9]{1,19}$/.test(seed)) {
    say("Not created: the deal number is digits only (up to 19), or blank for a random deal.");
    $("seed").focus();
    return;
  }
  // as text: a deal number may pass 2^53, past what a JavaScript number holds exactly
  if (seed !== "") request.seed = seed;
  request.start = document.querySelector('input[name="start"]:checked')?.value ?? "all_present";
  const clock = chosenClock();
  if (clock) request.clock = clock;
  if (bots.length && $("bot-pace").value !== "") request.bot_pace = Number($("bot-pace").value);
  let response;
  try {
    response = await fetch("/v1/games", { method: "POST", headers, body: JSON.stringify(request) });
  } catch (error) {
    say(`Not created. ${plainError(error)}`);
    return;
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new ApiError(response.status, body);
    say(`Not created: ${response.status === 401 ? "this service needs its platform key (ask its operator) and the key given is missing or wrong." : error.message}`);
    return;
  }
  const id = encodeURIComponent(body.game_id);
  const links = SEATS.map((seat) => ({
    text: `${title(seat)}${players[seat] ? ` (${players[seat]})` : ""}${bots.includes(seat) ? " (bot)" : ""}`,
    href: `/table/${id}#token=${body.tokens[seat]}`,
    note: bots.includes(seat) ? "watch only: a bot plays this seat" : "",
  }));
  links.push({ text: "Director's desk", href: `/desk/${id}#token=${body.tokens.director}`, note: "" });
  showLinks($("links"), links);
  $("created-start").textContent = START_WORDS[request.start] ?? "";
  $("created").hidden = false;
  // the answer fills a card below the form: bring it into view and to the keyboard
  $("created").focus({ preventScroll: true });
  $("created").scrollIntoView({ block: "start" });
  shownNow = body.game_id;
  const games = remembered();
  games.unshift({ game_id: body.game_id, ruleset: request.ruleset, created: new Date().toISOString(), links });
  localStorage.setItem(STORE, JSON.stringify(games.slice(0, 20)));
  showRemembered();
}

function showLinks(list, links) {
  list.replaceChildren();
  for (const { text, href, note } of links) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.textContent = text;
    li.append(a);
    if (note) li.append(` ${note}`);
    list.append(li);
  }
}

function remembered() {
  try {
    return JSON.parse(localStorage.getItem(STORE) || "[]");
  } catch (_) {
    return [];
  }
}

function showRemembered() {
  const games = remembered().filter((g) => g.game_id !== shownNow);
  $("remembered").hidden = games.length === 0;
  const list = $("remembered-list");
  list.replaceChildren();
  for (const g of games) {
    const li = document.createElement("li");
    const when = new Date(g.created).toLocaleString();
    const head = document.createElement("p");
    head.textContent = `${g.ruleset} game of ${when}`;
    const inner = document.createElement("ul");
    showLinks(inner, g.links);
    li.append(head, inner);
    list.append(li);
  }
}

async function start() {
  try {
    const response = await fetch("/v1/rulesets");
    rulesets = (await response.json()).rulesets;
  } catch (error) {
    say(`Cannot load the rules. ${plainError(error)} Reload the page to try again.`);
    return;
  }
  for (const r of rulesets) $("ruleset").append(new Option(r.title, r.name));
  $("ruleset").addEventListener("change", showRuleset);
  showRuleset();
  const box = $("players");
  for (const seat of SEATS) {
    const div = document.createElement("div");
    div.className = "field";
    div.innerHTML = `<label for="name-${seat}">${title(seat)}'s name</label>`;
    const name = document.createElement("input");
    name.id = `name-${seat}`;
    name.maxLength = 64;
    name.autocomplete = "off";
    const bot = document.createElement("span");
    bot.className = "inline";
    bot.innerHTML = `<input type="checkbox" id="bot-${seat}" name="${seat}"${seat !== "east" ? " checked" : ""}><label for="bot-${seat}">bot plays ${title(seat)}</label>`;
    div.append(name, bot);
    box.append(div);
  }
  $("create").addEventListener("submit", create);
  $("forget").addEventListener("click", () => {
    localStorage.removeItem(STORE);
    showRemembered();
  });
  showRemembered();
}

start();
