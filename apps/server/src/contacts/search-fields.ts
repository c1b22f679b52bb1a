import { parsePhone } from "../platform/phone-numbers.js";
import { fieldCatalog, listField, textField, timeField } from "../records/search/catalog.js";
import {
  type FieldsOf,
  invalidValue,
  OPERATORS,
  type Operator,
  type SearchField,
} from "../records/search/filter-groups.js";
import { asSent, flag, foldedText, idOf } from "../records/search/values.js";
import type { Schema } from "../spec/types.js";
import { type CustomFieldRule, type CustomFieldType, readFilterValue } from "./custom-field-values.js";

/**
 * The contact fields `searchContacts` filters on (the spec's `ContactSearchField`, plus
 * `custom_fields.<key>` and `external_ids.<system>`): where each is stored and how its values
 * read. Typed by the spec's list, so a field added there and not here fails to compile.
 */

/** A phone compared in E.164, read in the request's country as the list's `phone` filter reads it. */
const phoneField = (country: string | null): SearchField => ({
  path: "phone_e164",
  operators: OPERATORS.choice,
  read: (value, param) => {
    const parsed = typeof value === "string" ? parsePhone(value, country) : null;
    if (!parsed) {
      const where = country
        ? ` (read in ${country})`
        : "; without a default country it needs its +country code";
      throw invalidValue(param, `This is not a phone number${where}.`);
    }
    return parsed.e164;
  },
});

function namedFields(phoneCountry: string | null): Record<Schema<"ContactSearchField">, SearchField> {
  return {
    id: { path: "_id", operators: OPERATORS.id, read: idOf("con") },
    name: textField("name"),
    email: { path: "email_lc", operators: OPERATORS.text, read: foldedText, folded: true },
    phone: phoneField(phoneCountry),
    company: textField("company"),
    source: textField("source"),
    status: textField("status"),
    group: textField("group"),
    gender: textField("gender"),
    lifecycle_stage: textField("lifecycle_stage"),
    preferred_channel: textField("preferred_channel"),
    preferred_language: textField("preferred_language"),
    timezone: textField("timezone"),
    tags: listField("tags"),
    segments: listField("segments"),
    do_not_contact: { path: "do_not_contact", operators: OPERATORS.flag, read: flag },
    marketing_consent: { path: "marketing_consent", operators: OPERATORS.flag, read: flag },
    created_at: timeField("created_at"),
    updated_at: timeField("updated_at"),
  };
}

/** The operators a defined custom field takes, by its type. */
const CUSTOM_OPERATORS: Record<CustomFieldType, readonly Operator[]> = {
  text: OPERATORS.text,
  number: OPERATORS.ordered,
  date: OPERATORS.ordered,
  boolean: [...OPERATORS.flag, "exists"],
  select: OPERATORS.choice,
};

/**
 * A custom field: read by its definition's type where the workspace defines it (`seats gte "10"`
 * is refused for a number field), as sent where it does not.
 */
function customField(key: string, definition: CustomFieldRule | undefined): SearchField {
  const path = `custom_fields.${key}`;
  if (!definition) return { path, operators: OPERATORS.any, read: asSent };
  return {
    path,
    operators: CUSTOM_OPERATORS[definition.type],
    read: (value, param) => readFilterValue(definition, value, param),
  };
}

/**
 * The contact fields, phones read in `phoneCountry` (the request's or the workspace's), custom
 * fields by the workspace's `definitions`.
 */
export function contactSearchFields(
  phoneCountry: string | null,
  definitions: ReadonlyMap<string, CustomFieldRule> = new Map(),
): FieldsOf {
  return fieldCatalog("contact", namedFields(phoneCountry), {
    custom_fields: (key) => customField(key, definitions.get(key)),
    external_ids: (system) => textField(`external_ids.${system}`),
  });
}
