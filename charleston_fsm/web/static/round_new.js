// Create a round from a page (POST /v1/rounds), for a small event with no platform: then
// list the room's link and every table's seat and desk links, ready to print or copy.

import { SEATS, title } from "./tiles.js";
import { element, plainError } from "./console.js";
import { ApiError } from "./api.js";

const $ = (id) => document.getElementById(id);
let rulesets = [];

function say(text, kind = "info") {
  $("message").textContent = text;
  $("message").dataset.kind = kind;
}

const seconds = (id) => ($(id).value ? Number($(id).value) : null);

function body() {
  const bots = SEATS.filter((s) => $(`bot-${s}`).checked);
  const clock = {
    confirm_pass: seconds("clock-confirm"),
    vote: seconds("clock-vote"),
    courtesy: seconds("clock-courtesy"),
    place_tiles: seconds("clock-place"),
    on_expiry: $("clock-expiry").value,
  };
  const timed = ["confirm_pass", "vote", "courtesy", "place_tiles"].some((k) => clock[k] !== null);
  const count = Number($("count").value);
  const duplicate = $("deal").value === "duplicate";
  // BigInt: a first seed may pass 2^53, past what a JavaScript number holds exactly
  const seed = !duplicate && /^[0-9]{1,19}$/.test($("seed").value.trim()) ? BigInt($("seed").value.trim()) : null;
  const names = $("names").value.split("\n").map((line) => line.split(",").map((n) => n.trim()));
  const tables = [];
  for (let i = 0; i < count; i++) {
    const table = { ruleset: $("ruleset").value, label: `Table ${i + 1}` };
    if (seed !== null) table.seed = String(seed + BigInt(i)); // as text, exactly
    if (bots.length) table.bots = bots;
    if (timed) table.clock = clock;
    const players = {};
    SEATS.forEach((s, j) => { if (names[i]?.[j]) players[s] = names[i][j]; });
    if (Object.keys(players).length) table.players = players;
    tables.push(table);
  }
  const delay = Number($("spectator-delay").value || 0);
  const live = $("live-tables").value.split(/[\s,]+/).filter(Boolean).map(Number);
  const round = { name: $("name").value.trim() || null, tables, start: $("start").value, spectator_delay: delay };
  if (live.length) round.live_tables = live;
  if (duplicate) {
    round.deal = "duplicate";
    // text, never a number: a deal number exceeds 2^53, past what a JavaScript number holds
    const dealSeed = $("deal-seed").value.trim();
    if (dealSeed) round.deal_seed = dealSeed;
  }
  return round;
}

/** A duplicate round's tables share one deal: its number replaces the first table's seed. */
function showDeal() {
  const duplicate = $("deal").value === "duplicate";
  $("seed-row").hidden = duplicate;
  $("deal-seed-row").hidden = !duplicate;
}

function link(label, path) {
  const li = element("li");
  const url = new URL(path, location.origin).href;
  const a = element("a", label);
  a.href = url;
  li.append(a, element("br"), element("code", url));
  return li;
}

/** How far behind a spectator link shows its table, in words: every link says it. */
const behind = (delay, live) => (live || !delay ? "live" : `${delay} s behind`);

function show(round, sent) {
  const list = $("links");
  const delay = sent.spectator_delay;
  list.replaceChildren(
    link(`The room of ${round.name || "the round"} (director)`, round.links.room),
    link(`Spectators: every table, read only (never a tile), ${behind(delay)}`, round.links.spectator),
  );
  if (round.links.comparison) {
    list.append(link("The tables compared on their one deal (director)", round.links.comparison));
  }
  for (const t of round.tables) {
    const item = element("li");
    item.append(element("h3", `${t.label || `Table ${t.table}`}`));
    const inner = element("ul", "", "links-list");
    const featured = t.spectator.live && delay ? ": a featured table" : "";
    inner.append(link("Director's desk", t.links.director), link(`Spectators (${behind(t.spectator.delay, t.spectator.live)}${featured})`, t.links.spectator));
    const players = sent.tables[t.table - 1]?.players ?? {};
    for (const seat of SEATS) {
      const name = players[seat] ? `: ${players[seat]}` : "";
      const who = t.bots.includes(seat) ? " (bot: watch only)" : "";
      inner.append(link(`${title(seat)}${name}${who}`, t.links[seat]));
    }
    item.append(inner);
    list.append(item);
  }
  $("created").hidden = false;
  $("create").hidden = true;
  // the links replace the form: bring them into view and to the keyboard
  $("created").focus({ preventScroll: true });
  $("created").scrollIntoView({ block: "start" });
}

async function create(event) {
  event.preventDefault();
  say("");
  const headers = { "Content-Type": "application/json" };
  const key = $("platform-key").value.trim();
  if (key) headers.Authorization = `Bearer ${key}`;
  try {
    let response;
    const sent = body();
    try {
      response = await fetch("/v1/rounds", { method: "POST", headers, body: JSON.stringify(sent) });
    } catch (_) {
      throw new TypeError("no answer");
    }
    const answer = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, answer);
    show(answer, sent);
    const deal = answer.deal_seed ? `, every one dealt from deal number ${answer.deal_seed}` : "";
    say(`Round created: ${answer.tables.length} tables${deal}.`);
  } catch (error) {
    say(plainError(error, "round"), "error");
  }
}

async function start() {
  for (const seat of SEATS) {
    const label = element("label");
    const box = element("input");
    box.type = "checkbox";
    box.id = `bot-${seat}`;
    label.append(box, ` ${title(seat)} `);
    $("bots").append(label);
  }
  try {
    const answer = await (await fetch("/v1/rulesets")).json();
    rulesets = answer.rulesets || answer;
  } catch (_) {
    say(plainError(new TypeError("no answer")), "error");
    return;
  }
  for (const r of rulesets) $("ruleset").append(new Option(`${r.name}: ${r.title}`, r.name));
  const about = () => { $("ruleset-about").textContent = rulesets.find((r) => r.name === $("ruleset").value)?.description || ""; };
  $("ruleset").addEventListener("change", about);
  about();
  $("deal").addEventListener("change", showDeal);
  showDeal();
  $("create").addEventListener("submit", create);
  $("print").addEventListener("click", () => window.print());
  $("copy").addEventListener("click", async () => {
    const text = [...$("links").querySelectorAll("a")].map((a) => `${a.textContent}: ${a.href}`).join("\n");
    try {
      await navigator.clipboard.writeText(text);
      say("Every link is copied.");
    } catch (_) {
      say("The browser did not allow copying: select the links and copy them by hand.", "error");
    }
  });
}

start();
