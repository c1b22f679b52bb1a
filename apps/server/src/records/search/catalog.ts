import { type FieldsOf, invalidValue, OPERATORS, type SearchField } from "./filter-groups.js";
import { instant, text } from "./values.js";

/**
 * A resource's searchable fields as one lookup: its named fields, and its maps (a contact's
 * `custom_fields.<key>`) whose every key is a field. A name it does not know is refused with the
 * list of those it does, so a script with a typo learns the right name from the error.
 */
export function fieldCatalog(
  noun: string,
  named: Record<string, SearchField>,
  maps: Record<string, (key: string) => SearchField> = {},
): FieldsOf {
  const names = Object.keys(named);
  const mapNames = Object.keys(maps);
  return (name, param) => {
    if (Object.hasOwn(named, name)) return named[name] as SearchField;
    const dot = name.indexOf(".");
    const map = dot > 0 ? name.slice(0, dot) : "";
    const key = name.slice(dot + 1);
    // A map key as the spec's `MapKey` allows it.
    if (Object.hasOwn(maps, map) && /^[A-Za-z0-9_-]{1,64}$/.test(key) && key !== "__proto__") {
      return (maps[map] as (key: string) => SearchField)(key);
    }
    const more = mapNames.map((m) => `, \`${m}.<key>\``).join("");
    throw invalidValue(
      param,
      `\`${name}\` is not a ${noun} field a search takes: one of ${names.map((n) => `\`${n}\``).join(", ")}${more}.`,
    );
  };
}

/** The kinds of field contacts and tickets share, by where each is stored. */
export const textField = (path: string): SearchField => ({ path, operators: OPERATORS.text, read: text });
export const timeField = (path: string): SearchField => ({ path, operators: OPERATORS.time, read: instant });
/** A list of texts (tags): `eq` means "holds". */
export const listField = (path: string): SearchField => ({
  path,
  operators: OPERATORS.choice,
  read: text,
  list: true,
});
