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
      // Skip the string: a bracket inside one is text. An escape takes the next character with it.
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) {
        if (text.charCodeAt(i) === BACKSLASH) i++;
      }
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
