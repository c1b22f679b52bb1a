// `deskline contacts …`: the import (the ops team's daily job) and one command per API operation.

import type { Contact, ContactCreate, ContactSearch, ContactUpdate } from "@deskline/sdk";
import type { Command } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { contactColumns } from "../export/columns.js";
import { catalogOf } from "../fields.js";
import { contactCreateSchema } from "../generated/schemas.js";
import { INPUT_FORMATS, type InputFormat } from "../import/read-rows.js";
import { type Column, writeLine } from "../output.js";
import * as kit from "./kit.js";
import { searchCommand } from "./search.js";

const COLUMNS: Column<Contact>[] = [
  { header: "ID", value: (c) => c.id },
  { header: "NAME", value: (c) => c.name },
  { header: "EMAIL", value: (c) => c.email },
  { header: "STAGE", value: (c) => c.lifecycle_stage },
  { header: "TAGS", value: (c) => c.tags },
  { header: "CREATED", value: (c) => c.created_at },
];

const catalog = () => catalogOf(contactCreateSchema);

/** What `create` and `update` write, and their help. */
const TARGET: kit.BodyTarget = { noun: "contact", catalog: catalog };
const HELP = {
  create: [
    'deskline contacts create --set name="Ada Lovelace" --set email=ada@example.com --set "tags=vip;beta" --set custom_fields.plan=pro',
    'deskline contacts create --data \'{"name":"Ada","external_ids":{"crm":"4711"}}\'',
  ],
  update: {
    description: "change the fields given (field= clears one)",
    examples: [
      "deskline contacts update con_0VbeYDSZ9Ll1A3gKu1ulxi --set lifecycle_stage=customer --set phone=",
    ],
  },
};

export function register(contacts: Command): void {
  kit.examples(contacts, "deskline contacts import customers.csv", "deskline contacts list --search ada");
  importCommand(contacts);
  kit.listingCommand(
    contacts,
    {
      name: "list",
      description: "list contacts, newest first",
      operation: "listContacts",
      columns: COLUMNS,
      examples: [
        "deskline contacts list --tag vip --lifecycle-stage customer --limit 50",
        "deskline contacts list --json | jq -r .email",
      ],
    },
    (d, query) => d.contacts.list(query),
  );
  searchCommand(contacts, {
    noun: "contacts",
    columns: COLUMNS,
    fields: { flags: new Set(["do_not_contact", "marketing_consent"]) },
    query: true,
    search: (d, body) => d.contacts.search(body as ContactSearch),
    examples: [
      "deskline contacts search --where lifecycle_stage=lead --where 'custom_fields.plan in pro,team'",
      "deskline contacts search --where lifecycle_stage=lead --or-where tags=vip --sort updated_at --json",
      "deskline contacts search --where 'custom_fields.seats >= 10' --where 'email exists'",
    ],
  });
  kit.exportCommand(contacts, {
    noun: "contacts",
    operation: "listContacts",
    catalog: contactColumns,
    columns:
      "the columns `contacts import` reads (lists joined with ;, custom_fields.<key>, external_ids.<system>, address.<part>), id and time stamps too",
    list: (d, query) => d.contacts.list(query),
    examples: [
      "deskline contacts export --output contacts.csv",
      "deskline contacts export --tag vip --fields name,email,tags,custom_fields.plan > vip.csv",
      "deskline contacts export --format jsonl --updated-after 2026-01-01T00:00:00Z | jq -r .email",
    ],
  });
  kit.getCommand(
    contacts,
    { noun: "contact", id: "con", example: "deskline contacts get con_0VbeYDSZ9Ll1A3gKu1ulxi --json" },
    (d, id) => d.contacts.get(id),
  );
  kit.createCommand<ContactCreate>(contacts, TARGET, HELP.create, (d, body) => d.contacts.create(body));
  kit.updateCommand<ContactUpdate>(contacts, TARGET, HELP.update, (d, id, body) =>
    d.contacts.update(id, body),
  );
  kit.deleteCommand(
    contacts,
    { noun: "contact", id: "con", example: "deskline contacts delete con_0VbeYDSZ9Ll1A3gKu1ulxi" },
    (d, id) => d.contacts.delete(id),
  );
  eraseCommand(contacts);
}

/**
 * `deskline contacts erase <id...>`: the right to erasure, one contact at a time. Like `delete`, a
 * line per contact (the marker with `--json`); a repeat answers the same, so a script may re-run it.
 */
function eraseCommand(contacts: Command): void {
  kit.examples(
    contacts
      .command("erase")
      .description(
        "erase contacts' personal data everywhere it is kept (the contact, the events and deliveries that " +
          "carried it); receivers get contact.erased. Erasing again answers the same",
      )
      .argument("<id...>", "contact ids (con_…)")
      .action(async (ids: string[], _options, command: Command) => {
        const deskline = await clientFor(command);
        for (const id of ids) {
          const erased = await deskline.contacts.erase(id);
          writeLine(
            globalsOf(command).json ? JSON.stringify(erased) : `erased ${erased.id} at ${erased.erased_at}`,
          );
        }
      }),
    "deskline contacts erase con_0VbeYDSZ9Ll1A3gKu1ulxi",
    "deskline contacts erase con_0VbeYDSZ9Ll1A3gKu1ulxi --json",
  );
}

/** `deskline contacts import <file>`: the flags; the import itself is loaded only when it runs. */
function importCommand(contacts: Command): void {
  const command = contacts
    .command("import")
    .description(
      "create or update contacts from a CSV, JSON Lines or JSON array file (- for stdin). Columns name contact fields; " +
        "tags/segments split on ; or |; custom_fields.<key> and external_ids.<system> columns fill those maps. " +
        "A row whose email (or --match external id) exists updates that contact with what differs; re-running changes nothing. " +
        "The id, created_at and updated_at columns of a `contacts export` file are skipped.",
    )
    .argument("<file>", "CSV, .jsonl/.ndjson or .json file, or - for stdin")
    .option(
      "--format <format>",
      `input format (default: from the extension, else sniffed): ${INPUT_FORMATS.join(", ")}`,
    )
    .option(
      "--map <Column=field>",
      'rename a column, e.g. --map "E-Mail=email" (repeatable; "Column=" skips it)',
      kit.collect,
      [],
    )
    .option("--match <key>", "find existing contacts by 'email' or 'external_ids.<system>'", "email")
    .option("--concurrency <n>", "requests in flight at once", kit.positiveInteger, 8)
    .option("--errors <file>", "write rejected rows here with their line number and reason")
    .option("--dry-run", "validate and report what would happen, writing nothing")
    .action(runImport);
  kit.examples(
    command,
    'deskline contacts import crm-export.csv --map "E-Mail=email" --map "CRM Id=external_ids.crm" --match external_ids.crm --errors rejected.csv',
    "deskline contacts import contacts.jsonl --dry-run --json",
    "cat contacts.csv | deskline contacts import - --concurrency 16",
  );
}

/** The flags of `contacts import`, as commander parses them. */
interface ImportFlags {
  format?: string;
  map: string[];
  match: string;
  concurrency: number;
  errors?: string;
  dryRun?: boolean;
}

async function runImport(file: string, options: ImportFlags, command: Command): Promise<void> {
  const { importContacts } = await import("../import/import-contacts.js");
  const deskline = await clientFor(command, { maxRetries: 8 });
  await importContacts(deskline, {
    file,
    format: options.format as InputFormat | undefined,
    map: options.map,
    match: options.match,
    concurrency: Math.max(1, options.concurrency),
    errors: options.errors,
    dryRun: Boolean(options.dryRun),
    json: Boolean(globalsOf(command).json),
  });
}
