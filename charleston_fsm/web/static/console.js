// What the director's pages share (desk and room): plain sentences for what went wrong,
// a confirm dialog before anything that cannot be undone, and times for people.

import { ApiError, refusalText } from "./api.js";

export { element } from "./dom.js";

/** Whether a failure is the server not answering (it may come back by itself). */
export const unreachable = (error) => !(error instanceof ApiError);

/** A failure as a sentence a director can act on, never a raw error. */
export function plainError(error, noun = "game") {
  if (!(error instanceof ApiError)) {
    return "The server does not answer: it may be stopped or restarting. This page tries " +
      "again by itself; if it stays like this, ask whoever runs the service to start it again.";
  }
  const code = error.problem?.code;
  if (error.status === 404) {
    return `There is no such ${noun} on this server: the link is stale (the database may have ` +
      "been reset) or was copied wrongly. Ask for the link again.";
  }
  if (code === "invalid_token" || code === "missing_token") {
    return `This link's secret does not open this ${noun}: it belongs to another game or ` +
      "round, or was cut short when copied. Ask for the link again.";
  }
  if (error.status === 423) {
    return "This game is quarantined: its record failed verify. Repair it and lift the " +
      "quarantine (charleston-fsm quarantine lift) before anything else.";
  }
  if (error.status >= 500) {
    return "The server failed to answer this time; nothing was lost. Try again in a moment.";
  }
  return refusalText(error);
}

/** Ask before an irreversible act; resolves true only when the director confirms. */
export function confirmAct(text, action = "Yes, do it") {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-ok").textContent = action;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((done) => {
    dialog.addEventListener("close", () => done(dialog.returnValue === "ok"), { once: true });
  });
}

/** "14:02:07" in the browser's time zone, from an ISO time. */
export function clockTime(iso) {
  return iso ? new Date(iso).toLocaleTimeString([], { hour12: false }) : "";
}

/** "1 min 05 s" for a number of seconds (negative: 0). */
export function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${String(s % 60).padStart(2, "0")} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Until a deadline, for a seat card: "due in 42 s" or "overdue by 3 s". */
export function dueText(iso, now = Date.now()) {
  const left = (new Date(iso).getTime() - now) / 1000;
  return left >= 0 ? `due in ${duration(left)}` : `overdue by ${duration(-left)}`;
}
