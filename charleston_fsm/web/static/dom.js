// What every page's drawing shares: an element by id, and a new element with its text.

/** The element with this id. */
export const $ = (id) => document.getElementById(id);

/** A new element with its text and class. */
export function element(tag, text = "", className = "") {
  const el = document.createElement(tag);
  if (text) el.textContent = text;
  if (className) el.className = className;
  return el;
}

/** "A", "A and B", "A, B and C". */
export function joined(words) {
  return words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}
