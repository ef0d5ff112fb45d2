// The public /v1 API as the pages use it: the token from the URL fragment, commands with
// the retry rule of docs/api.md, and the SSE stream read with fetch() (EventSource cannot
// send an Authorization header).

/** The game id from the page's path (/table/<id>, /desk/<id>). */
export function gameIdFromPath() {
  const parts = location.pathname.split("/").filter(Boolean);
  return decodeURIComponent(parts[parts.length - 1] || "");
}

/** The token: read from #token=… (the fragment never reaches a server) and kept in the
 * address bar, so the link still opens the seat when copied or bookmarked; sessionStorage
 * keeps it for the tab when the page is reopened without it. */
export function tokenFor(gameId) {
  const key = `charleston-token:${gameId}`;
  const fromUrl = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromUrl) sessionStorage.setItem(key, fromUrl);
  return fromUrl || sessionStorage.getItem(key);
}

/** A refusal or failure, with the problem+json body when there is one. */
export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
}

export class Api {
  constructor(gameId, token) {
    this.gameId = gameId;
    this.token = token;
    this.base = `/v1/games/${encodeURIComponent(gameId)}`;
  }

  headers(extra = {}) {
    return { Authorization: `Bearer ${this.token}`, ...extra };
  }

  async request(path, { method = "GET", body, headers = {}, as = "json" } = {}) {
    const init = { method, headers: this.headers(headers) };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
    const response = await fetch(this.base + path, init);
    if (!response.ok) {
      let problem = null;
      try {
        problem = await response.json();
      } catch (_) {
        /* not JSON: the status says enough */
      }
      throw new ApiError(response.status, problem);
    }
    return as === "text" ? response.text() : response.json();
  }

  get(path = "", as = "json") {
    return this.request(path, { as });
  }

  /** Send a command with one id; on any doubt (503, 500, lost connection) send it again
   * with the same id, as the retry rule says: the store applies an id at most once. */
  async command(command, route = "/commands") {
    const id = `web-${crypto.randomUUID()}`;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.request(route, {
          method: "POST",
          body: command,
          headers: { "Idempotency-Key": id },
        });
      } catch (error) {
        const doubt = !(error instanceof ApiError) || error.status >= 500;
        if (!doubt || attempt >= 4) throw error;
        const wait = Number(error.problem?.retry_after) || 0.5 * (attempt + 1);
        await new Promise((done) => setTimeout(done, wait * 1000));
      }
    }
  }

  /** Follow the game's stream (`path`: a spectator's is /spectate/stream) after seq
   * `after`; calls onEvent(message) per stored event and reconnects by itself after a
   * drop, resuming after the last seq seen. A stream ended for a token that opens nothing
   * any more (a substitute's new link, a revoked spectator link: `invalid_token`) closes
   * for good. Returns a stop function. */
  follow(onEvent, onStatus = () => {}, after = 0, path = "/stream") {
    let last = after;
    let stopped = false;
    let controller = null;
    const run = async () => {
      while (!stopped) {
        controller = new AbortController();
        try {
          const headers = this.headers({ Accept: "text/event-stream" });
          if (last) headers["Last-Event-ID"] = String(last);
          const response = await fetch(`${this.base}${path}`, {
            headers,
            signal: controller.signal,
          });
          if (!response.ok) throw new ApiError(response.status, await response.json());
          onStatus("live");
          for await (const message of sseMessages(response.body)) {
            if (message.event === "invalid_token") throw new ApiError(401, message.data);
            if (message.id) last = Number(message.id);
            onEvent(message);
          }
        } catch (error) {
          if (stopped) return;
          if (error instanceof ApiError && error.status < 500) {
            onStatus("closed", error);
            return;
          }
        }
        if (stopped) return;
        onStatus("reconnecting");
        await new Promise((done) => setTimeout(done, 1000));
      }
    };
    run();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }
}

/** Parse a text/event-stream body into {event, id, data} messages. */
export async function* sseMessages(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let message = { event: "message", id: null, data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + (buffer.startsWith("\r\n", cut) ? 2 : 1));
      if (line === "") {
        if (message.data.length) {
          yield { event: message.event, id: message.id, data: JSON.parse(message.data.join("\n")) };
        }
        message = { event: "message", id: null, data: [] };
        continue;
      }
      if (line.startsWith(":")) continue; // a ping
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") message.data.push(text);
      else if (field === "event") message.event = text;
      else if (field === "id") message.id = text;
    }
  }
}

/** Words for a refusal: the detail, then the rule it enforces. */
export function refusalText(error) {
  const p = error.problem || {};
  const rule = p.rule ? ` (${p.rule}${p.rule_text ? `: ${p.rule_text}` : ""})` : "";
  return `${error.message}${rule}`;
}

/** The stream's state for people: live, reconnecting, or closed (with the reason). */
export function showLive(el) {
  const words = { live: "● live", reconnecting: "○ reconnecting…", closed: "stream closed" };
  return (status, error) => {
    el.textContent = words[status] + (error ? `: ${refusalText(error)}` : "");
  };
}

/** A failure in plain words for players: what went wrong and what to do (no rule ids). */
export function plainError(error) {
  if (!(error instanceof ApiError)) {
    return "The service cannot be reached: check your connection. The page keeps trying by itself.";
  }
  if (error.status === 401 || error.status === 403) {
    return "This link does not open a seat at this game: it is wrong or out of date. Ask whoever created the game for your seat's link.";
  }
  if (error.status === 404) {
    return "There is no such game on this service: the link is wrong or the game was removed. Ask whoever created the game for a new link.";
  }
  if (error.status === 423) {
    return "This game is set aside while the director checks its record. Ask the director.";
  }
  if (error.status >= 500) return "The service had a problem and did not answer. Try again in a moment.";
  return error.message;
}
