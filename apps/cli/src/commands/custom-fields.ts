// `deskline custom-fields …`: the workspace's typed custom fields of contacts (list, get, create,
// update, delete), each named by its key as contacts' `custom_fields` name it.
import type { Command } from "commander";
import { Option } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { type Column, printList, printObject, writeLine } from "../output.js";
import { collect, examples, getCommand } from "./kit.js";

interface Definition {
  key: string;
  label: string;
  type: string;
  options: string[] | null;
  required: boolean;
  searchable: boolean;
}

const COLUMNS: Column<Definition>[] = [
  { header: "KEY", value: (d) => d.key },
  { header: "TYPE", value: (d) => d.type },
  { header: "LABEL", value: (d) => d.label },
  { header: "REQUIRED", value: (d) => d.required },
  { header: "SEARCHABLE", value: (d) => d.searchable },
  { header: "OPTIONS", value: (d) => d.options?.join("; ") ?? "" },
];

const TYPES = ["text", "number", "boolean", "date", "select"];

/** `--required true|false`, `--searchable true|false`: a flag that can also turn a setting off. */
const flag = (name: string, description: string) =>
  new Option(`--${name} <true|false>`, description).choices(["true", "false"]);

/** The body fields the options set; `--option` repeats (a select field's values, in order). */
function fieldsOf(options: { label?: string; option?: string[]; required?: string; searchable?: string }) {
  return {
    ...(options.label !== undefined && { label: options.label }),
    ...(options.option !== undefined && { options: options.option }),
    ...(options.required !== undefined && { required: options.required === "true" }),
    ...(options.searchable !== undefined && { searchable: options.searchable === "true" }),
  };
}

export function register(group: Command): void {
  examples(
    group,
    "deskline custom-fields create seats --type number --label Seats --searchable true",
    "deskline custom-fields list",
  );
  examples(
    group
      .command("list")
      .description("list the workspace's custom field definitions, newest first")
      .action(async (_options, command: Command) => {
        const list = await (await clientFor(command)).customFieldDefinitions.list();
        await printList(list.data, COLUMNS, { json: Boolean(globalsOf(command).json) });
      }),
    "deskline custom-fields list --json | jq -r .key",
  );
  getCommand(
    group,
    { noun: "custom field definition", id: "key", example: "deskline custom-fields get seats" },
    (d, key) => d.customFieldDefinitions.get(key),
  );
  examples(
    group
      .command("create")
      .description("define a custom field: contact writes are then checked against its type")
      .argument("<key>", "the key, as contacts' custom_fields name it")
      .addOption(new Option("--type <type>", "what its values are").choices(TYPES).makeOptionMandatory())
      .option("--label <text>", "what people see (default: the key)")
      .option("--option <value>", "a value a select field takes (repeatable)", collect)
      .addOption(flag("required", "a contact must have it (default false)"))
      .addOption(flag("searchable", "index it for the list filter (default false)"))
      .action(async (key: string, options, command: Command) => {
        const body = { key, label: key, type: options.type, ...fieldsOf(options) };
        const created = await (await clientFor(command)).customFieldDefinitions.create(body);
        printObject(created, Boolean(globalsOf(command).json));
      }),
    "deskline custom-fields create plan --type select --option free --option team --option enterprise",
  );
  examples(
    group
      .command("update")
      .description("change a definition's label, options, required or searchable (its type cannot change)")
      .argument("<key>", "the definition's key")
      .option("--label <text>", "what people see")
      .option("--option <value>", "the values a select field takes, all of them (repeatable)", collect)
      .addOption(flag("required", "a contact must have it"))
      .addOption(flag("searchable", "index it for the list filter"))
      .action(async (key: string, options, command: Command) => {
        const updated = await (await clientFor(command)).customFieldDefinitions.update(
          key,
          fieldsOf(options),
        );
        printObject(updated, Boolean(globalsOf(command).json));
      }),
    "deskline custom-fields update seats --required true",
  );
  examples(
    group
      .command("delete")
      .description("delete definitions; contacts keep their values under the key")
      .argument("<key...>", "definition keys")
      .action(async (keys: string[], _options, command: Command) => {
        const deskline = await clientFor(command);
        for (const key of keys) {
          const deleted = await deskline.customFieldDefinitions.delete(key);
          writeLine(globalsOf(command).json ? JSON.stringify(deleted) : `deleted ${deleted.key}`);
        }
      }),
    "deskline custom-fields delete seats",
  );
}
