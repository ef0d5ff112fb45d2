// Tiles that move where they go: after a pass, the tiles this seat gave slide to the seat
// that receives them, and the tiles it received arrive from the sender's side. Motion is
// only decoration: the page is drawn first and never waits for it, and with
// prefers-reduced-motion nothing moves at all.

import { $ } from "./dom.js";

const still = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;
const DURATION = 520;

/** Before the new view is drawn: the rack tiles about to leave it, with where they are. */
export function leaving(before, after) {
  if (!before || still()) return [];
  const kept = new Set([...after.rack, ...after.received].map((t) => t.id));
  const to = before.step?.to;
  if (!to) return [];
  return before.rack
    .filter((t) => !kept.has(t.id))
    .map((t) => ({ to, el: $("rack").querySelector(`.tile[data-id="${t.id}"]`) }))
    .filter((t) => t.el)
    .map((t) => ({ to: t.to, el: t.el, box: t.el.getBoundingClientRect() }));
}

/** After the new view is drawn: fly the leaving tiles to their receiver, and bring the
 * newly received ones in from their sender (`fromOf(id)`: the seat, if known). */
export function play(gone, before, after, fromOf) {
  if (still()) return;
  for (const { to, el, box } of gone) fly(el, box, seatBox(to));
  if (!before) return;
  const had = new Set(before.received.map((t) => t.id));
  for (const tile of after.received) {
    if (had.has(tile.id)) continue;
    const from = fromOf(tile.id) ?? before.step?.from;
    const el = $("received").querySelector(`.tile[data-id="${tile.id}"]`);
    const origin = seatBox(from);
    if (el && origin) arrive(el, origin);
  }
}

function seatBox(seat) {
  return seat ? document.querySelector(`#others .seat-box[data-seat="${seat}"]`)?.getBoundingClientRect() : null;
}

const centre = (r) => ({ x: r.left + r.width / 2, y: r.top + r.height / 2 });

/** A copy of a tile that left the rack, flying from where it was to its receiver. */
function fly(el, from, target) {
  if (!target) return;
  const ghost = el.cloneNode(true);
  ghost.removeAttribute("data-id");
  ghost.removeAttribute("data-face");
  ghost.removeAttribute("id");
  ghost.setAttribute("aria-hidden", "true");
  ghost.tabIndex = -1;
  ghost.className = `${el.className} flight`;
  Object.assign(ghost.style, { left: `${from.left}px`, top: `${from.top}px`, width: `${from.width}px`, height: `${from.height}px` });
  document.body.append(ghost);
  const a = centre(from);
  const b = centre(target);
  const run = ghost.animate(
    [
      { transform: "translate(0, 0) scale(1)" },
      { transform: `translate(${b.x - a.x}px, ${b.y - a.y}px) scale(0.5)` },
    ],
    { duration: DURATION, easing: "ease-in" },
  );
  run.onfinish = () => ghost.remove();
  run.oncancel = () => ghost.remove();
}

/** A received tile coming in from its sender's seat to its place above the rack. */
function arrive(el, origin) {
  const here = el.getBoundingClientRect();
  const a = centre(origin);
  const b = centre(here);
  el.animate(
    [
      { transform: `translate(${a.x - b.x}px, ${a.y - b.y}px) scale(0.5)` },
      { transform: "translate(0, 0) scale(1)" },
    ],
    { duration: DURATION, easing: "ease-out" },
  );
}
