import { searchKeysOf, searchTerms } from "../platform/search-keys.js";

/**
 * What a contact's `search` finds it by: word prefixes of its name and email and the digits of
 * its phone (platform/search-keys.ts makes the keys; docs/decisions.md, "Search by word
 * prefix"). The keys are stored with the contact by every write that sets these fields, and the
 * list's `search` is an equality on them, which the `{workspace_id, search_keys, _id}` index
 * serves in the list's order.
 */

/** The fields a contact's keys are made of. */
export interface SearchedFields {
  name: string;
  email: string | null;
  phone?: unknown;
  phone_e164?: string | null;
}

/** The stored field; hidden from the API (toResource lists only the spec's fields). */
export const SEARCH_KEYS_FIELD = "search_keys";

/** The keys a contact with these fields is stored with. */
export const contactSearchKeys = (doc: SearchedFields): string[] =>
  searchKeysOf({
    texts: [doc.name, doc.email],
    phones: [{ phone: typeof doc.phone === "string" ? doc.phone : null, e164: doc.phone_e164 }],
  });

/**
 * The list filter of a `search`: every word's prefix among the keys. A query with no letter or
 * digit asks for the empty key, which no contact holds: nothing matches, read from the index.
 */
export function searchFilter(search: string, param = "search"): Record<string, unknown> {
  const terms = searchTerms(search, param);
  if (terms.length <= 1) return { [SEARCH_KEYS_FIELD]: terms[0] ?? "" };
  return { [SEARCH_KEYS_FIELD]: { $all: terms } };
}
