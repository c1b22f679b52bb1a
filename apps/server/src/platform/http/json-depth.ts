/**
 * How deep a JSON text nests, read from the raw text in one linear pass, before anything parses
 * it (docs/decisions.md "Bounded JSON bodies"). JSON.parse, the duplicate-name check and the
 * value check all walk a parsed body; a 1 MiB body of `[` half a million levels deep kept the
 * server busy for over a second before any of them could refuse it. Counting brackets outside
 * strings costs one look at each character and stops at the first level past the bound.
 */

/** Whether `text` opens more than `maxDepth` arrays or objects inside one another. */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: a bracket inside one is text.
      i = endOfString(text, i);
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes the string opening at `start` (or the end of `text`). */
function endOfString(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end === -1) return text.length;
    // Escaped when an odd number of backslashes stands right before it.
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
