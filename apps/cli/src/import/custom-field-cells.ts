// A CSV cell of a `custom_fields.<key>` column read as the workspace defines that key: a number
// field's `25` is sent as the number 25, a boolean's `yes` as true; a cell that does not read as
// its type fails its row, like any other row error. Text columns of undefined keys stay text.
import { type Deskline, PermissionError } from "@deskline/sdk";
import { parseBoolean } from "../fields.js";
import { terminal } from "../terminal.js";

/** The workspace's custom field types by key. */
export type CustomFieldTypes = ReadonlyMap<string, string>;

/**
 * The workspace's custom field types, read once per import, and only when the file has a
 * `custom_fields.<key>` column (`needed`). A key without `contacts:read` cannot list them: the
 * cells then go as text, and the server refuses the ones its definitions do not take.
 */
export async function customFieldTypes(deskline: Deskline, needed: boolean): Promise<CustomFieldTypes> {
  if (!needed) return new Map();
  try {
    const { data } = await deskline.customFieldDefinitions.list();
    return new Map(data.map((definition) => [definition.key, definition.type]));
  } catch (error) {
    if (!(error instanceof PermissionError)) throw error;
    terminal().stderr.write(
      "custom fields: the key cannot read their definitions (contacts:read); cells go as text\n",
    );
    return new Map();
  }
}

/** A number as a spreadsheet writes one: `25`, `-2.5`, `1e3` (not `0x10`, not `1,5`). */
const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** One cell read by its field's type, or why it cannot be. */
export function readCell(
  type: string | undefined,
  key: string,
  text: string,
): { value: unknown } | { error: string } {
  if (type === "number") {
    return NUMBER.test(text)
      ? { value: Number(text) }
      : { error: `custom_fields.${key}: '${text}' is not a number` };
  }
  if (type === "boolean") {
    const value = parseBoolean(text);
    return typeof value === "boolean"
      ? { value }
      : { error: `custom_fields.${key}: '${text}' is not true or false` };
  }
  return { value: text };
}
