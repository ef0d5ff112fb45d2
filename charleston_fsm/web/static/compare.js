// A duplicate round's comparison, for its director: every table was dealt the same tiles
// to the same winds, so each seat's passes are set side by side, table under table
// (GET /v1/rounds/{id}/comparison). The service holds the tiles back until every table's
// Charleston has ended (a pass shown early would tell a table still passing what its
// neighbours hold); until then the page says where each finished table stopped and looks
// again every few seconds.

import { ApiError, gameIdFromPath, tokenFor } from "./api.js";
import { joined } from "./dom.js";
import { SEATS, faceName, faceOf, title } from "./tiles.js";
import { element, plainError, unreachable } from "./console.js";

const roundId = gameIdFromPath();
const token = tokenFor(roundId);
const $ = (id) => document.getElementById(id);
const path = `/v1/rounds/${encodeURIComponent(roundId)}/comparison`;

function say(text, kind = "info") {
  $("message").textContent = text;
  $("message").dataset.kind = kind;
}

async function get(format = "json") {
  let response;
  try {
    response = await fetch(`${path}?format=${format}`, { headers: { Authorization: `Bearer ${token}` } });
  } catch (_) {
    throw new TypeError("no answer");
  }
  if (!response.ok) {
    let problem = null;
    try { problem = await response.json(); } catch (_) { /* the status says enough */ }
    throw new ApiError(response.status, problem);
  }
  return format === "csv" ? response.text() : response.json();
}

function cell(label, content) {
  const td = element("td", "", label ? "" : "no-label");
  td.dataset.label = label;
  if (typeof content === "string") td.textContent = content;
  else td.append(content);
  return td;
}

/** The table's name and its players, as the room shows them. */
function tableCell(t) {
  const box = element("div");
  const name = `Table ${t.table}${t.label && t.label !== `Table ${t.table}` ? ` · ${t.label}` : ""}`;
  box.append(element("strong", name));
  const named = SEATS.filter((s) => t.players?.[s]);
  if (named.length) box.append(element("span", named.map((s) => `${t.players[s]} (${title(s)})`).join(", "), "players"));
  return box;
}

const who = (t, seat) => t.players?.[seat] || title(seat);

/** Tiles as their names, each with its id for whoever checks against the desk. */
function tiles(ids) {
  const box = element("span");
  ids.forEach((id, i) => {
    const chip = element("span", faceName(faceOf(id)), "tile-chip");
    chip.dataset.id = id;
    box.append(chip);
    if (i < ids.length - 1) box.append(" ");
  });
  return box;
}

function renderStops(comparison) {
  const body = $("stops");
  body.replaceChildren();
  for (const t of comparison.tables) {
    const tr = element("tr");
    tr.dataset.table = t.table;
    const playing = t.quarantined ? "quarantined: nothing is read from its record" : t.held ? "not started" : "still playing";
    const votes = SEATS.filter((s) => t.seats[s]?.votes?.length).map((s) => `${who(t, s)}: ${t.seats[s].votes.join(", ")}`);
    const courtesy = (t.courtesy || []).map((c) => `${joined(c.pair.map((s) => who(t, s)))}: ${c.count}`);
    tr.append(
      cell("", tableCell(t)),
      cell("Stopped", t.finished ? t.ending || t.ended_reason || "ended" : playing),
      cell("Last pass played", t.stopped_after ? `${t.stopped_after.number}. ${t.stopped_after.label}` : "–"),
      cell("Votes", votes.join("; ") || "–"),
      cell("Courtesy Pass", courtesy.join("; ") || "–"),
    );
    body.append(tr);
  }
}

/** The steps any table played, in the order they were first played. */
function stepsOf(comparison) {
  const steps = new Map();
  for (const t of comparison.tables) for (const p of t.passes) if (!steps.has(p.step)) steps.set(p.step, p.label);
  return [...steps];
}

function renderSeats(comparison) {
  const box = $("seats");
  box.replaceChildren();
  if (!comparison.complete) return;
  const steps = stepsOf(comparison);
  for (const seat of SEATS) {
    const section = element("section", "", "card seat-comparison");
    section.setAttribute("aria-labelledby", `seat-${seat}`);
    const heading = element("h2", `${title(seat)}: what each table passed`);
    heading.id = `seat-${seat}`;
    section.append(heading);
    const dealt = element("p", `${title(seat)} was dealt: `);
    dealt.append(tiles(comparison.hands[seat]));
    section.append(dealt);
    const table = element("table", "", "room-tables");
    table.dataset.seat = seat;
    const head = element("tr");
    head.append(element("th", "Table"), ...steps.map(([, label]) => element("th", label)));
    head.querySelectorAll("th").forEach((th) => th.setAttribute("scope", "col"));
    const thead = element("thead");
    thead.append(head);
    const tbody = element("tbody");
    for (const t of comparison.tables) {
      const tr = element("tr");
      tr.dataset.table = t.table;
      const th = element("th", `Table ${t.table} · ${who(t, seat)}`);
      th.setAttribute("scope", "row");
      tr.append(th);
      for (const [step, label] of steps) {
        const passes = (t.seats[seat]?.passes || []).filter((p) => p.step === step);
        if (!passes.length) {
          const played = t.passes.some((p) => p.step === step);
          tr.append(cell(label, played ? "– (nothing from this seat)" : "not played"));
          continue;
        }
        const content = element("div");
        for (const p of passes) {
          const line = element("div");
          line.dataset.step = step;
          line.append(p.tiles.length ? tiles(p.tiles) : element("span", "nothing from the hand"));
          if (p.unseen.length) {
            line.append(element("span", ` + ${p.unseen.length} passed on unseen: `, "muted"), tiles(p.unseen));
          }
          line.append(element("span", ` → ${who(t, p.to)}`, "muted"));
          content.append(line);
        }
        tr.append(cell(label, content));
      }
      tbody.append(tr);
    }
    table.append(thead, tbody);
    // a wide table scrolls sideways: the box takes the keyboard's focus so arrows scroll it
    const wrap = element("div", "", "table-wrap");
    wrap.tabIndex = 0;
    wrap.setAttribute("role", "region");
    wrap.setAttribute("aria-label", `${section.querySelector("h2, h3")?.textContent || "Passes"} (scrolls sideways)`);
    wrap.append(table);
    section.append(wrap);
    box.append(section);
  }
}

function render(comparison) {
  $("title").textContent = `Duplicate comparison · ${comparison.name || comparison.round_id}`;
  document.title = `Charleston · ${comparison.name || "round"} comparison`;
  const finished = comparison.tables.filter((t) => t.finished).length;
  const deal = comparison.deal_seed ? ` · dealt from deal number ${comparison.deal_seed}` : "";
  $("counts").textContent = `${comparison.tables.length} tables, one deal · ${finished} finished${deal}`;
  renderStops(comparison);
  renderSeats(comparison);
  if (comparison.complete) say("Every table's Charleston has ended: each seat's passes are below, table under table.");
  else say(`${comparison.withheld} This page looks again every few seconds.`);
}

async function refresh() {
  try {
    const comparison = await get();
    render(comparison);
    return !comparison.complete;
  } catch (error) {
    say(plainError(error, "round"), "error");
    return unreachable(error) || error.status >= 500;
  }
}

async function download(format) {
  try {
    const text = format === "csv" ? await get("csv") : JSON.stringify(await get(), null, 1);
    const a = element("a");
    a.href = URL.createObjectURL(new Blob([text], { type: format === "csv" ? "text/csv" : "application/json" }));
    a.download = `round-${roundId}-comparison.${format}`;
    a.click();
  } catch (error) {
    say(plainError(error, "round"), "error");
  }
}

function start() {
  if (!token) {
    document.body.classList.add("broken");
    say("This page needs the round's link, the one that ends in #token=…. It was shown when the round was created.", "error");
    return;
  }
  $("room-link").href = `/room/${encodeURIComponent(roundId)}#token=${encodeURIComponent(token)}`;
  $("comparison-csv").addEventListener("click", (e) => { e.preventDefault(); download("csv"); });
  $("comparison-json").addEventListener("click", (e) => { e.preventDefault(); download("json"); });
  const loop = async () => {
    if (await refresh()) setTimeout(loop, 3000);
  };
  loop();
}

start();
