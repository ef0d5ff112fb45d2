// The director's desk: the full table, the live statechart, the timeline with a replay
// slider (GET …/replay?seq=N), the audit with every tile's route and the hash-chain check.

import { Api, ApiError, gameIdFromPath, refusalText, showLive, tokenFor } from "./api.js";
import { SEATS, tileElement, title } from "./tiles.js";

const gameId = gameIdFromPath();
const api = new Api(gameId, tokenFor(gameId));
const $ = (id) => document.getElementById(id);
const state = { events: [], lastSeq: 0, shownSeq: null, urls: [] };

function say(text, kind = "info") {
  $("message").textContent = text;
  $("message").dataset.kind = kind;
}

function fail(error) {
  say(error instanceof ApiError ? refusalText(error) : String(error), "error");
}

function tiles(list) {
  const box = document.createElement("div");
  box.className = "seat-tiles";
  for (const t of list) {
    const el = tileElement(t, { tag: "span" });
    el.classList.add("small-tile");
    box.append(el);
  }
  return box;
}

function renderView(view, seq) {
  const g = view.game;
  $("where").textContent = `${g.ruleset} · game ${gameId}`;
  const facts = $("facts");
  facts.replaceChildren();
  const h = document.createElement("h2");
  h.textContent = seq === null ? "The table now" : `The table at seq ${seq}`;
  facts.append(h);
  const lines = [
    `State: ${g.state_labels.join(" · ") || g.state.join(" · ")}`,
    `Passes resolved: ${g.passes_resolved} · wall: ${view.wall.count} tiles`,
  ];
  for (const step of g.steps) {
    lines.push(`${step.label}: ready ${step.confirmed.map(title).join(", ") || "nobody"}; waiting for ${step.awaiting.map(title).join(", ") || "nobody"}`);
  }
  if (g.votes && Object.keys(g.votes).length) lines.push(`Votes: ${Object.entries(g.votes).map(([s, c]) => `${title(s)} ${c}`).join(", ")}`);
  if (Object.keys(view.courtesy_agreed).length) lines.push(`Courtesy agreed: ${Object.entries(view.courtesy_agreed).map(([p, n]) => `${p} ${n}`).join(", ")}`);
  if (g.declaration) lines.push(`${title(g.declaration.seat)} declared ${g.declaration.kind} Mah Jongg (${g.declaration.verdict})`);
  if (g.ding_dong) lines.push(`Ding Dong: ${g.ding_dong.requested} of ${g.ding_dong.max}${g.ding_dong.ready ? `, ${title(g.ding_dong.ready)} Ready` : ""}${g.ding_dong.closed ? ", closed" : ""}`);
  if (g.finished) lines.push(`Over: ${g.ended_reason ?? "complete"}`);
  for (const line of lines) {
    const p = document.createElement("p");
    p.textContent = line;
    facts.append(p);
  }
  const seats = $("seats");
  seats.replaceChildren();
  for (const seat of SEATS) {
    const s = view.seats[seat];
    const card = document.createElement("div");
    card.className = "card";
    card.dataset.seat = seat;
    const name = document.createElement("h2");
    name.textContent = `${title(seat)} · ${g.hand_sizes[seat]} tiles${s.offer !== null && s.offer !== undefined ? ` · offers ${s.offer}` : ""}`;
    card.append(name, tiles(s.rack));
    if (s.received.length) {
      const label = document.createElement("p");
      label.className = "muted";
      label.textContent = "Received, not placed:";
      card.append(label, tiles(s.received));
    }
    if (s.selection) {
      const label = document.createElement("p");
      label.className = "muted";
      label.textContent = `Chosen, locked${s.selection.blind ? ` (+${s.selection.blind} blind)` : ""}${s.selection.to ? ` to ${s.selection.to.map(title).join(", ")}` : ""}:`;
      card.append(label, tiles(s.selection.tiles));
    }
    seats.append(card);
  }
  $("close-ding-dong").hidden = !(g.ding_dong && !g.ding_dong.closed && !g.finished);
}

function renderTimeline() {
  const list = $("timeline");
  list.replaceChildren();
  for (const e of state.events) {
    const li = document.createElement("li");
    li.value = e.seq;
    li.dataset.seq = e.seq;
    li.textContent = `${e.type}${e.seat ? ` · ${e.seat}` : ""}`;
    if (e.seq === state.shownSeq) li.classList.add("current");
    li.addEventListener("click", () => showAt(e.seq));
    list.append(li);
  }
  const slider = $("slider");
  slider.max = String(Math.max(1, state.lastSeq));
  if ($("follow").checked) slider.value = String(state.lastSeq);
}

async function showAt(seq) {
  $("follow").checked = seq >= state.lastSeq;
  $("slider").value = String(seq);
  $("seq-out").textContent = String(seq);
  try {
    const answer = await api.get(`/replay?seq=${seq}`);
    if (Number($("slider").value) !== seq) return; // the slider moved on meanwhile
    state.shownSeq = seq;
    renderView(answer.view, seq);
    renderTimeline();
    document.body.dataset.replaySeq = String(seq);
  } catch (error) {
    fail(error);
  }
}

async function refresh() {
  try {
    const listing = await api.get(`/events?after=${state.lastSeq}`);
    state.events.push(...listing.events);
    state.lastSeq = listing.last_seq;
    renderTimeline();
    if ($("follow").checked) {
      const now = await api.get();
      state.shownSeq = state.lastSeq;
      $("seq-out").textContent = String(state.lastSeq);
      renderView(now.view, null);
      renderTimeline();
      document.body.dataset.replaySeq = String(state.lastSeq);
    }
    const box = $("diagram");
    box.innerHTML = await api.get("/diagram?format=svg", "text");
    const lit = box.querySelector("svg .active");
    if (lit && $("follow").checked) {
      // bring the lit state into view (the diagram is taller than its box)
      box.scrollTop += lit.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3;
    }
    await loadAudit();
  } catch (error) {
    fail(error);
  }
}

async function loadAudit() {
  const [json, text] = await Promise.all([api.get("/audit"), api.get("/audit?format=text", "text")]);
  $("audit").textContent = text;
  for (const url of state.urls) URL.revokeObjectURL(url);
  const jsonUrl = URL.createObjectURL(new Blob([JSON.stringify(json, null, 2)], { type: "application/json" }));
  const textUrl = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  state.urls = [jsonUrl, textUrl];
  $("audit-json").href = jsonUrl;
  $("audit-json").download = `audit-${gameId}.json`;
  $("audit-text").href = textUrl;
  $("audit-text").download = `audit-${gameId}.txt`;
}

let timer = null;
const refreshSoon = () => {
  clearTimeout(timer);
  timer = setTimeout(refresh, 150);
};

$("slider").addEventListener("input", () => showAt(Number($("slider").value)));
$("follow").addEventListener("change", () => $("follow").checked && refresh());
$("verify").addEventListener("click", async () => {
  try {
    const result = await api.get("/verify");
    const out = $("verify-result");
    const findings = result.findings ?? [];
    out.className = findings.length ? "bad" : "ok";
    out.textContent = findings.length
      ? `${findings.length} finding(s): ${findings.map((f) => `${f.kind} at ${f.seq}: ${f.message}`).join("; ")}`
      : "Hash chain intact: every row, the head and the anchors check.";
  } catch (error) {
    fail(error);
  }
});
$("close-ding-dong").addEventListener("click", async () => {
  try {
    await api.command({ type: "close_ding_dong" }, "/director/commands");
    say("Ding Dong window closed.");
  } catch (error) {
    fail(error);
  }
});

if (!api.token) {
  say("This page needs the director's link (…#token=…).", "error");
} else {
  refresh();
  api.follow(
    (message) => message.event !== "subscribed" && refreshSoon(),
    showLive($("live")),
  );
}
