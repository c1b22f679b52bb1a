import { isSupportedCountry, parsePhoneNumberFromString } from "libphonenumber-js";

/**
 * Phone numbers read into E.164 with libphonenumber-js (its `min` metadata). Pure, and in the
 * platform so that the contacts and the migration that normalises stored phones read a number
 * alike (docs/decisions.md, "Phones in E.164").
 */

export interface ParsedPhone {
  /** `+` and up to 15 digits. */
  e164: string;
  /** ISO 3166-1 alpha-2, or null where the number alone does not tell (a `+1` 555 number). */
  country: string | null;
}

/** Is `code` a country libphonenumber-js has metadata for (`US`, `FR`…)? */
export const isPhoneCountry = (code: string): boolean => isSupportedCountry(code);

/**
 * `text` in E.164, read in `defaultCountry` when it has no `+` and country code; null when it
 * does not read as a possible number. Possible, not valid: validity depends on number ranges
 * the metadata keeps changing (the fictitious 555-01xx numbers are possible, not valid), and a
 * refusal must not start with a library update.
 */
export function parsePhone(text: string, defaultCountry?: string | null): ParsedPhone | null {
  const country = defaultCountry && isPhoneCountry(defaultCountry) ? defaultCountry : undefined;
  const parsed = parsePhoneNumberFromString(
    text,
    country as Parameters<typeof parsePhoneNumberFromString>[1],
  );
  if (!parsed?.isPossible()) return null;
  return { e164: parsed.number, country: parsed.country ?? null };
}
