import { DomainError } from "./errors.js";

/**
 * Word-prefix search kept as exact keys (docs/decisions.md, "Search by word prefix"). A record
 * stores every prefix of every word of its searchable text (`search_keys`), so "a word starting
 * with `jos`" is the equality `search_keys: "jos"`: one key of a multikey index on MongoDB, one
 * posting list of the embedded fallback's search index. Pure, and in the platform so that the
 * contacts and the migration that fills stored contacts' keys make the same keys.
 */

/** Longest key kept: a word's prefixes stop there, and a longer query word is cut to it. */
export const MAX_KEY_LENGTH = 15;
/** Most words a query may have: each is one more key every candidate is checked against. */
export const MAX_SEARCH_WORDS = 8;

/** Lower case, compatibility-decomposed, combining marks stripped: `José` and `JOSE` read `jose`. */
export const foldText = (text: string): string =>
  text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "");

/** The words of a text: its runs of letters and digits (so an email splits on `@ . - _ +`). */
export const wordsOf = (text: string): string[] =>
  foldText(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/**
 * The digit strings a phone is found by: from each digit group of the text as written to its
 * end, so `+1 (555) 010-2030` is found by `555010` and `2030`, and its E.164 digits, so a number
 * written nationally is found by its country code too.
 */
export function phoneWords(phone: string | null | undefined, e164: string | null | undefined): string[] {
  const groups = (phone ?? "").match(/\d+/g) ?? [];
  const words = groups.map((_, index) => groups.slice(index).join(""));
  if (e164) words.push(e164.replace(/\D/g, ""));
  return words;
}

/** Every prefix of each word, up to MAX_KEY_LENGTH characters, once each, in a stable order. */
export function prefixKeys(words: string[]): string[] {
  const keys = new Set<string>();
  for (const word of words) {
    const chars = [...word].slice(0, MAX_KEY_LENGTH);
    for (let length = 1; length <= chars.length; length++) keys.add(chars.slice(0, length).join(""));
  }
  return [...keys].sort();
}

/** The searchable fields of a record: free text (a name, an email) and phones with their E.164 form. */
export interface Searchable {
  texts: (string | null | undefined)[];
  phones: { phone: string | null | undefined; e164: string | null | undefined }[];
}

/** The keys a record is stored with. */
export function searchKeysOf({ texts, phones }: Searchable): string[] {
  const words = texts.flatMap((text) => (text ? wordsOf(text) : []));
  for (const { phone, e164 } of phones) words.push(...phoneWords(phone, e164));
  return prefixKeys(words);
}

/**
 * The keys a query asks for, all of which a record must hold: its words, folded and cut to
 * MAX_KEY_LENGTH. None when it has no letter or digit (it then matches nothing). More than
 * MAX_SEARCH_WORDS words is `400 parameter_invalid` naming `param`.
 */
export function searchTerms(query: string, param: string): string[] {
  const words = wordsOf(query);
  if (words.length > MAX_SEARCH_WORDS) {
    throw new DomainError(
      "invalid",
      "parameter_invalid",
      `\`${param}\` has ${words.length} words; at most ${MAX_SEARCH_WORDS} are searched for at once.`,
      { param },
    );
  }
  return [...new Set(words.map((word) => [...word].slice(0, MAX_KEY_LENGTH).join("")))];
}
