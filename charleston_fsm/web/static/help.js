// Help where the question arises, in the words of the project's rule book (the ruleset's
// own rules, GET /v1/rulesets/{name}): a short guide the first time a seat meets a blind
// pass, the vote, the Courtesy Pass or Ding Dong (dismissed once, remembered in this
// browser), and on every step a "How does this pass work?" disclosure with the rules the
// chart's state plays out.

import { $, element } from "./dom.js";
import { state } from "./table_state.js";

/** The first-time guides: when each is met, its title, and the rules it quotes. */
const GUIDES = [
  {
    topic: "blind",
    meets: (v) => Boolean(v.step?.blind_allowed && !v.step.confirmed),
    title: "A blind pass",
    rules: ["NMJL-07", "NMJL-08"],
  },
  { topic: "vote", meets: (v) => v.game.phase === "vote", title: "The vote", rules: ["NMJL-02", "NMJL-03", "NMJL-05", "HOUSE-04"] },
  { topic: "courtesy", meets: (v) => v.game.phase === "courtesy", title: "The Courtesy Pass", rules: ["NMJL-12", "NMJL-13", "HOUSE-03"] },
  {
    topic: "ding_dong",
    meets: (v) => v.game.phase === "ding_dong_window" || v.game.phase === "ding_dong",
    title: "Ding Dong",
    rules: ["FW-04", "FW-05", "FW-06", "FW-08"],
  },
];

/** What the "how does it work" disclosure is called in each phase. */
const QUESTIONS = {
  pass: "How does this pass work?",
  courtesy: "How does the Courtesy Pass work?",
  vote: "How does the vote work?",
  ding_dong_window: "How does Ding Dong work?",
  ding_dong: "How does Ding Dong work?",
  done: "What happens now?",
};

/** Always said with a pass: choices are secret until everyone has confirmed. */
const EVERY_PASS = ["PASS-05", "PASS-06", "PASS-03"];

const seenKey = (topic) => `charleston-guide-seen:${topic}`;
const seen = (topic) => localStorage.getItem(seenKey(topic)) === "1";

function statements(ids) {
  const rules = state.ruleset?.rules ?? {};
  return [...new Set(ids)].filter((id) => rules[id]).map((id) => ({ id, text: rules[id] }));
}

function ruleList(ids) {
  const list = element("ul", "", "rule-list");
  for (const { id, text } of statements(ids)) {
    const li = element("li", text);
    li.append(" ", element("span", `(${id})`, "rule-id"));
    list.append(li);
  }
  return list;
}

/** The rules the table's present states play out (the chart's own list). */
function activeRules(v) {
  const byState = state.ruleset?.state_rules ?? {};
  const ids = v.game.state.flatMap((s) => byState[s] ?? []);
  return ["pass", "courtesy"].includes(v.game.phase) ? [...ids, ...EVERY_PASS] : ids;
}

export function renderHelp(v) {
  const box = $("help");
  if (!state.ruleset) return;
  const guide = GUIDES.find((g) => g.meets(v) && !seen(g.topic) && statements(g.rules).length);
  const shown = $("guide");
  if (!guide) {
    shown?.remove();
  } else if (shown?.dataset.topic !== guide.topic) {
    shown?.remove();
    const aside = element("aside", "", "guide");
    aside.id = "guide";
    aside.dataset.topic = guide.topic;
    aside.setAttribute("aria-labelledby", "guide-title");
    const heading = element("h2", guide.title);
    heading.id = "guide-title";
    const close = element("button", "Got it", "guide-close");
    close.type = "button";
    close.setAttribute("aria-label", `Got it: hide the guide to ${guide.title.toLowerCase()}`);
    close.addEventListener("click", () => {
      localStorage.setItem(seenKey(guide.topic), "1");
      aside.remove();
      $("how")?.querySelector("summary")?.focus();
    });
    aside.append(heading, ruleList(guide.rules), close);
    box.prepend(aside);
  }
  const question = QUESTIONS[v.game.phase] ?? QUESTIONS.pass;
  let how = $("how");
  const ids = activeRules(v);
  const key = `${v.game.phase}|${ids.join()}`;
  if (!ids.length) {
    how?.remove();
    return;
  }
  if (how && how.dataset.key === key) return;
  const open = how?.open ?? false;
  how?.remove();
  how = element("details", "", "how");
  how.id = "how";
  how.dataset.key = key;
  how.open = open;
  how.append(element("summary", question), ruleList(ids));
  box.append(how);
}
