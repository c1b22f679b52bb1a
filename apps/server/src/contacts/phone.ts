import { DomainError } from "../platform/errors.js";
import { isPhoneCountry, parsePhone } from "../platform/phone-numbers.js";
import type { PhoneSettings } from "../workspaces/workspaces.js";

/**
 * A contact's phone as stored: the number as given beside its E.164 form and country, read with
 * the workspace's phone settings or a request's `phone_country` (docs/decisions.md, "Phones in
 * E.164").
 */

/** How a request reads phone numbers: the workspace's settings, its country maybe overridden. */
export interface PhoneRules {
  /** The country a number without `+` is read in; none: such a number does not read. */
  country: string | null;
  /** `strict` refuses a number that does not read; `lenient` keeps it with no E.164 form. */
  validation: "strict" | "lenient";
}

/** What a phone number of one contact is stored as beside `phone`. */
export interface PhoneFields {
  phone_e164: string | null;
  phone_country: string | null;
}

export const NO_PHONE: PhoneFields = { phone_e164: null, phone_country: null };

/** The stored forms of `phone` (null or absent: none); a number that does not read is 400 when strict. */
export function phoneFields(phone: unknown, rules: PhoneRules): PhoneFields {
  if (typeof phone !== "string") return NO_PHONE;
  const parsed = parsePhone(phone, rules.country);
  if (parsed) return { phone_e164: parsed.e164, phone_country: parsed.country };
  if (rules.validation === "lenient") return NO_PHONE;
  const hint = rules.country
    ? `, read in ${rules.country}`
    : " (no default country is set: write it with + and its country code, or pass `phone_country`)";
  throw new DomainError("invalid", "parameter_invalid", `\`phone\` is not a phone number${hint}.`, {
    param: "phone",
  });
}

/**
 * The query of the `phone` filter: the E.164 form when the value reads as a number, else the
 * value as given (what a lenient workspace stored).
 */
export function phoneFilter(value: string, country: string | null): Record<string, string> {
  const parsed = parsePhone(value, country);
  return parsed ? { phone_e164: parsed.e164 } : { phone: value };
}

/** The rules a write reads with in a strict workspace with no default country (benches, tools). */
export const STRICT_NO_COUNTRY: PhoneRules = { country: null, validation: "strict" };

/**
 * A request's rules: the workspace's settings, its country replaced by the request's
 * `phone_country` when given (checked here: two capitals may still name no country).
 */
export function phoneRules(settings: PhoneSettings, override: string | undefined): PhoneRules {
  if (override !== undefined && !isPhoneCountry(override)) {
    throw new DomainError(
      "invalid",
      "parameter_invalid",
      `\`phone_country\` '${override}' is not a country with phone numbers.`,
      {
        param: "phone_country",
      },
    );
  }
  return { country: override ?? settings.default_phone_country, validation: settings.phone_validation };
}
