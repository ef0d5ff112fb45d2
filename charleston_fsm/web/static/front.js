// The front door: create a game (POST /v1/games), hand the chosen seats to bots
// (POST /v1/games/{id}/bot with that seat's token) and list the seat and desk links.

import { Api, ApiError, refusalText } from "./api.js";
import { SEATS, title } from "./tiles.js";

const $ = (id) => document.getElementById(id);
let rulesets = [];

function optionField(name, info) {
  const label = document.createElement("label");
  label.textContent = `${name.replaceAll("_", " ")} `;
  let input;
  if (info.choices) {
    input = document.createElement("select");
    for (const c of info.choices) input.append(new Option(String(c), String(c), false, c === info.default));
  } else if (info.type === "boolean") {
    input = document.createElement("input");
    input.type = "checkbox";
    input.checked = Boolean(info.default);
  } else {
    input = document.createElement("input");
    input.type = info.type === "integer" ? "number" : "text";
    input.value = info.default ?? "";
  }
  input.name = name;
  input.dataset.type = info.type;
  label.append(input);
  const p = document.createElement("p");
  p.append(label);
  return p;
}

function showRuleset() {
  const r = rulesets.find((x) => x.name === $("ruleset").value);
  $("ruleset-about").textContent = r.description;
  const box = $("options");
  box.replaceChildren(box.querySelector("legend") ?? document.createElement("legend"));
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

async function create(event) {
  event.preventDefault();
  $("message").textContent = "";
  const headers = { "Content-Type": "application/json" };
  const key = $("platform-key").value.trim();
  if (key) headers.Authorization = `Bearer ${key}`;
  const response = await fetch("/v1/games", {
    method: "POST",
    headers,
    body: JSON.stringify({ ruleset: $("ruleset").value, options: chosenOptions() }),
  });
  const body = await response.json();
  if (!response.ok) {
    $("message").textContent = refusalText(new ApiError(response.status, body));
    $("message").dataset.kind = "error";
    return;
  }
  const bots = SEATS.filter((s) => $("bots").querySelector(`[name="${s}"]`).checked);
  for (const seat of bots) {
    try {
      await new Api(body.game_id, body.tokens[seat]).request("/bot", { method: "POST" });
    } catch (error) {
      $("message").textContent = `${title(seat)}'s bot did not start: ${refusalText(error)}`;
    }
  }
  const list = $("links");
  list.replaceChildren();
  const link = (text, href, note) => {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.textContent = text;
    li.append(a);
    if (note) li.append(` ${note}`);
    list.append(li);
  };
  const id = encodeURIComponent(body.game_id);
  for (const seat of SEATS) {
    const bot = bots.includes(seat);
    link(`${title(seat)}${bot ? " (bot)" : ""}`, `/table/${id}#token=${body.tokens[seat]}`, bot ? "watch only: a bot plays this seat" : "");
  }
  link("Director's desk", `/desk/${id}#token=${body.tokens.director}`);
  $("created").hidden = false;
}

async function start() {
  const response = await fetch("/v1/rulesets");
  rulesets = (await response.json()).rulesets;
  for (const r of rulesets) $("ruleset").append(new Option(`${r.title} (${r.name})`, r.name));
  $("ruleset").addEventListener("change", showRuleset);
  showRuleset();
  const bots = $("bots");
  for (const seat of SEATS) {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.name = seat;
    box.checked = seat !== "east";
    label.append(box, ` ${title(seat)} `);
    bots.append(label);
  }
  $("create").addEventListener("submit", create);
}

start();
