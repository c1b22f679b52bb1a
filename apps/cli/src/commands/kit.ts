// Pieces every command group shares: help examples, list filter flags built from the spec's query
// parameters, request bodies from `--data`/`--set`, and paged list printing.
import { readFileSync } from "node:fs";
import type { Deskline, operations, QueryOf } from "@deskline/sdk";
import { type Command, InvalidArgumentError, Option } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { UsageError } from "../errors.js";
import { assign, type FieldCatalog, targetOf } from "../fields.js";
import { listParameters } from "../generated/schemas.js";
import { type Column, printList, printObject, writeLine } from "../output.js";
import { ago, rfc3339 } from "../when.js";

/** Every command's help ends with examples. */
export function examples(command: Command, ...lines: string[]): Command {
  return command.addHelpText(
    "after",
    `\nExample${lines.length > 1 ? "s" : ""}:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`,
  );
}

export const positiveInteger = (value: string): number => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError("must be a whole number ≥ 0");
  return number;
};

const kebab = (name: string) => name.replace(/_/g, "-");
const camel = (name: string) => name.replace(/[-_]([a-z])/g, (_, c: string) => c.toUpperCase());

/** A list operation, by `operationId`: its flags are its query parameters. */
export type ListOperation = keyof typeof listParameters;
type Parameter = (typeof listParameters)[ListOperation][number];

/** The SDK's query type of a list operation. */
export type ListQuery<Id extends ListOperation> = QueryOf<operations[Id]>;

/** Time filters that also take a duration back from now (`--created-after 6h`), sent as RFC 3339. */
const TIME_FILTERS = new Set(["created_after", "created_before"]);

/**
 * One flag per query parameter, named like it (`--lifecycle-stage`, and `--lifecycle_stage` as
 * the API writes it); repeatable ones (`--tag a --tag b`) collect. Plus `--limit` on the total.
 */
export function addListOptions(command: Command, parameters: readonly Parameter[]): Command {
  for (const parameter of parameters) {
    const value = parameter.array ? `<${parameter.name}...>` : `<${parameter.name}>`;
    const description =
      parameter.description +
      (parameter.array ? " Repeatable." : "") +
      (TIME_FILTERS.has(parameter.name) ? " Or a duration back from now (6h, 2d)." : "");
    const flag = new Option(`--${kebab(parameter.name)} ${value}`, description);
    if (parameter.type === "boolean") flag.choices(["true", "false"]);
    command.addOption(flag);
    if (parameter.name.includes("_"))
      command.addOption(new Option(`--${parameter.name} ${value}`).hideHelp());
  }
  return command.option(
    "--limit <n>",
    "at most this many in total (lists page automatically)",
    positiveInteger,
  );
}

/**
 * The query of list operation `id` from the parsed flags. The flags are that operation's own
 * query parameters (generated from the same spec), each converted to its type (booleans, times);
 * what the user wrote in them is the server's to validate, hence the one assertion at the end.
 */
export function queryOf<Id extends ListOperation>(options: Record<string, unknown>, id: Id): ListQuery<Id> {
  const parameters: readonly Parameter[] = listParameters[id];
  const query: Record<string, unknown> = {};
  for (const parameter of parameters) {
    const value = options[camel(parameter.name)] ?? options[parameter.name];
    if (value === undefined) continue;
    const since = TIME_FILTERS.has(parameter.name) ? ago(String(value)) : undefined;
    query[parameter.name] =
      since !== undefined ? rfc3339(since) : parameter.type === "boolean" ? value === "true" : value;
  }
  return query as ListQuery<Id>;
}

/** Pages of at most 100 (the API's maximum), fewer when `--limit` asks for fewer. */
export const pageSize = (limit: number | undefined) => Math.min(100, Math.max(1, limit ?? 100));

export async function listCommand<T>(
  command: Command,
  items: AsyncIterable<T>,
  columns: readonly Column<T>[],
  limit: number | undefined,
): Promise<void> {
  await printList(items, columns, { json: Boolean(globalsOf(command).json), limit });
}

/** What a list command shows: its operation (whose query parameters are its flags) and columns. */
export interface Listing<Id extends ListOperation, T> {
  /** The subcommand's name: `list`, or what a nested list is of (`deliveries`). */
  name: string;
  description: string;
  operation: Id;
  columns: readonly Column<T>[];
  examples: string[];
}

/** `<group> list`: the operation's filters as flags, every page printed (a table, or JSON Lines). */
export function listingCommand<Id extends ListOperation, T>(
  parent: Command,
  what: Listing<Id, T>,
  list: (deskline: Deskline, query: ListQuery<Id>) => AsyncIterable<T>,
): void {
  const command = addListOptions(
    parent.command(what.name).description(what.description),
    listParameters[what.operation],
  );
  command.action(async (options, command: Command) => {
    const deskline = await clientFor(command);
    const query = { ...queryOf(options, what.operation), limit: pageSize(options.limit) };
    await listCommand(command, list(deskline, query), what.columns, options.limit);
  });
  examples(command, ...what.examples);
}

/**
 * `<group> <name> <id>`: a list under one parent (an event's deliveries), like `listingCommand`;
 * `run` wraps the listing (`guided`, which says what to do after a foreseeable error).
 */
export function nestedListingCommand<Id extends ListOperation, T>(
  parent: Command,
  what: Listing<Id, T> & { argument: string },
  list: (deskline: Deskline, id: string, query: ListQuery<Id>) => AsyncIterable<T>,
  run: (listing: Promise<void>, id: string) => Promise<void> = (listing) => listing,
): void {
  const command = addListOptions(
    parent.command(what.name).description(what.description).argument("<id>", what.argument),
    listParameters[what.operation],
  );
  command.action(async (id: string, options, command: Command) => {
    const deskline = await clientFor(command);
    const query = { ...queryOf(options, what.operation), limit: pageSize(options.limit) };
    await run(listCommand(command, list(deskline, id, query), what.columns, options.limit), id);
  });
  examples(command, ...what.examples);
}

/** A repeatable option's values, in order (`--tag a --tag b`). */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `--data <json|@file|->` and repeatable `--set field=value` for create and update. */
export function addBodyOptions(command: Command): Command {
  return command
    .option("-d, --data <json>", "the request body as JSON; @file reads a file, - reads stdin")
    .option(
      "-s, --set <field=value>",
      "one field (repeatable): lists split on ; or |, custom_fields.<key>, external_ids.<system>, address.<part>",
      collect,
    );
}

/**
 * The body from `--data` and `--set` (sets win), mapped like import columns, as the SDK's body
 * type `Body` of the operation it is for (`bodyOf<ContactCreate>(…)`): the fields are the user's,
 * checked by the server, which answers 400 naming the one at fault.
 */
export function bodyOf<Body extends object>(
  options: { data?: string; set?: string[] },
  catalog: FieldCatalog,
  /** Fields a command's own flags made (`webhooks endpoints update --header`); `--set` wins. */
  extra: object = {},
): Body {
  const body: Record<string, unknown> = { ...extra };
  if (options.data !== undefined) {
    const text =
      options.data === "-"
        ? readFileSync(0, "utf8")
        : options.data.startsWith("@")
          ? readFileSync(options.data.slice(1), "utf8")
          : options.data;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`--data is not valid JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new UsageError("--data must be a JSON object");
    }
    Object.assign(body, parsed);
  }
  for (const pair of options.set ?? []) {
    const equals = pair.indexOf("=");
    if (equals <= 0) throw new UsageError(`--set '${pair}' must look like field=value`);
    const name = pair.slice(0, equals).trim();
    const target = targetOf(name, catalog);
    if (!target)
      throw new UsageError(
        `--set: unknown field '${name}' (fields: ${[...catalog.kinds.keys()].join(", ")})`,
      );
    const text = pair.slice(equals + 1);
    // `field=` clears an optional field, as `null` does in the API.
    assign(body, target, text === "" ? null : text, catalog);
  }
  if (Object.keys(body).length === 0)
    throw new UsageError("nothing to send: give --data '{…}' or --set field=value");
  return body as Body;
}

/** What create and update write: the resource's name and the fields `--set` may name. */
export interface BodyTarget {
  noun: string;
  catalog: () => FieldCatalog;
}

/** `<group> create`: the body from `--data`/`--set` (the fields of `catalog`), the answer printed. */
export function createCommand<Body extends object>(
  parent: Command,
  what: BodyTarget,
  help: string[],
  create: (deskline: Deskline, body: Body) => Promise<object>,
): void {
  const command = addBodyOptions(parent.command("create").description(`create a ${what.noun}`));
  command.action(async (options, command: Command) => {
    const created = await create(await clientFor(command), bodyOf<Body>(options, what.catalog()));
    printObject(created as Record<string, unknown>, Boolean(globalsOf(command).json));
  });
  examples(command, ...help);
}

/** `<group> update <id>`: the fields given in `--data`/`--set` (`field=` clears one), the answer printed. */
export function updateCommand<Body extends object>(
  parent: Command,
  what: BodyTarget,
  help: { description: string; examples: string[] },
  update: (deskline: Deskline, id: string, body: Body) => Promise<object>,
  /** The group's own options, and the fields of the body they make (beside `--data`/`--set`). */
  extra?: { options: (command: Command) => Command; body: (options: Record<string, unknown>) => object },
): void {
  const command = parent.command("update").description(help.description).argument("<id>", `${what.noun} id`);
  (extra?.options ?? ((c: Command) => c))(addBodyOptions(command)).action(
    async (id: string, options, command: Command) => {
      const body = bodyOf<Body>(options, what.catalog(), extra?.body(options));
      const updated = await update(await clientFor(command), id, body);
      printObject(updated as Record<string, unknown>, Boolean(globalsOf(command).json));
    },
  );
  examples(command, ...help.examples);
}

/** `<group> get <id>`: one object, as `key  value` lines or JSON. */
export function getCommand(
  parent: Command,
  what: { noun: string; id: string; example: string },
  get: (deskline: Deskline, id: string) => Promise<object>,
): void {
  examples(
    parent
      .command("get")
      .description(`show one ${what.noun}`)
      .argument("<id>", `${what.noun} id (${what.id}_…)`)
      .action(async (id: string, _options, command: Command) => {
        const deskline = await clientFor(command);
        printObject((await get(deskline, id)) as Record<string, unknown>, Boolean(globalsOf(command).json));
      }),
    what.example,
  );
}

/** `<group> delete <id...>`: deletes each in turn, stopping at the first error. */
export function deleteCommand(
  parent: Command,
  what: { noun: string; id: string; example: string },
  remove: (deskline: Deskline, id: string) => Promise<{ id: string }>,
): void {
  examples(
    parent
      .command("delete")
      .description(`delete ${what.noun}s`)
      .argument("<id...>", `${what.noun} ids (${what.id}_…)`)
      .action(async (ids: string[], _options, command: Command) => {
        const deskline = await clientFor(command);
        for (const id of ids) {
          const deleted = await remove(deskline, id);
          writeLine(globalsOf(command).json ? JSON.stringify(deleted) : `deleted ${deleted.id}`);
        }
      }),
    what.example,
  );
}

/** What `<group> export` writes: the resource, its list operation and the columns of its fields. */
interface ExportTarget<Id extends ListOperation> {
  noun: string;
  operation: Id;
  catalog: () => FieldCatalog;
  /** What the columns are, for the help. */
  columns: string;
  list: (deskline: Deskline, query: ListQuery<Id>) => AsyncIterable<object>;
  examples: string[];
}

/**
 * `<group> export`: the list's filters, plus `--format`, `--fields` and `--output`; every item
 * (auto-paging) in the columns `contacts import` reads.
 */
export function exportCommand<Id extends ListOperation>(parent: Command, what: ExportTarget<Id>): void {
  const command = addListOptions(
    parent
      .command("export")
      .description(
        `write every matching ${what.noun.replace(/s$/, "")} as CSV or JSON Lines (to stdout, or --output), paging automatically: ${what.columns}`,
      ),
    listParameters[what.operation],
  )
    .addOption(new Option("--format <format>", "csv or jsonl").choices(["csv", "jsonl"]).default("csv"))
    .option(
      "--fields <names>",
      "these columns only, in this order, comma-separated (e.g. name,email,custom_fields.plan)",
    )
    .option("-o, --output <file>", "write to this file (complete or not at all) instead of stdout")
    .option(
      "--no-escape-formulas",
      "write CSV cells as they are: by default a cell starting with = + - @ tab or CR gets a leading ' so spreadsheets show it as text (import takes it off)",
    );
  examples(
    command.action((options: ExportFlags, cmd: Command) => runExport(what, options, cmd)),
    ...what.examples,
  );
}

/** The flags of `<group> export`, as commander parses them (the list's filters besides). */
interface ExportFlags extends Record<string, unknown> {
  format: string;
  fields?: string;
  output?: string;
  limit?: number;
  escapeFormulas?: boolean;
}

async function runExport<Id extends ListOperation>(
  what: ExportTarget<Id>,
  options: ExportFlags,
  cmd: Command,
): Promise<void> {
  const { exportItems } = await import("../export/export.js");
  const deskline = await clientFor(cmd, { maxRetries: 8 });
  const query = {
    ...queryOf(options, what.operation),
    limit: pageSize(options.limit),
  };
  await exportItems(what.list(deskline, query) as AsyncIterable<Record<string, unknown>>, what.catalog(), {
    noun: what.noun,
    format: options.format,
    fields: options.fields,
    output: options.output,
    limit: options.limit,
    json: Boolean(globalsOf(cmd).json),
    escapeFormulas: options.escapeFormulas !== false,
  });
}
